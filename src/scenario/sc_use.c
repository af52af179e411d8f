/* sc_use.c - which variables the program still reads: for each variable
 * slot, the text offset of its last read, where a read inside a `repeat`
 * body counts at the loop's end (the next iteration reads it again). A
 * variable is in use at a statement when its last read is at or after the
 * statement's start; what it holds is then expected to be alive, and
 * reports rank it after what nothing in the program asks for. */
#include "scenario/sc_vm.h"

#include <string.h>

static void expr_uses(const sc_expr *e, uint32_t at, uint32_t *last)
{
    if (!e)
        return;
    if (e->kind == E_VAR && last[e->slot] < at)
        last[e->slot] = at;
    expr_uses(e->recv, at, last);
    for (uint16_t i = 0; i < e->nargs; i++)
        expr_uses(e->args[i], at, last);
    for (uint16_t i = 0; i < e->nkw; i++)
        expr_uses(e->kwvals[i], at, last);
}

/* The offset just past the last statement of s (nested included). */
static uint32_t stmt_end(const sc_stmt *s)
{
    uint32_t end = s->text_off + s->text_len;
    for (uint32_t i = 0; i < s->nbody; i++) {
        uint32_t b = stmt_end(s->body[i]);
        if (b > end)
            end = b;
    }
    return end;
}

/* at: 0, or the end of the outermost enclosing loop */
static void block_uses(sc_stmt *const *b, uint32_t n, uint32_t at, uint32_t *last)
{
    for (uint32_t i = 0; i < n; i++) {
        const sc_stmt *s = b[i];
        uint32_t here = at ? at : s->text_off + 1;
        expr_uses(s->target, here, last);
        expr_uses(s->e, here, last);
        uint32_t inner = at ? at : s->kind == S_REPEAT ? stmt_end(s) + 1 : 0;
        block_uses(s->body, s->nbody, inner, last);
    }
}

void sc_var_uses(const sc_program *p, uint32_t *last)
{
    memset(last, 0, (p->nvars ? p->nvars : 1) * sizeof *last);
    block_uses(p->top, p->ntop, 0, last);
}

int sc_var_in_use(const sc_vm *vm, uint32_t slot)
{
    return vm->last_use && vm->cur && vm->last_use[slot] > vm->cur->text_off;
}
