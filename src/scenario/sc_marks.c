/* sc_marks.c - what each line of a program does, for the marks of the
 * timeline chart (sc.h, sc_program_marks). */
#include "scenario/sc_int.h"

#include "report/rp_timeline.h"

static uint8_t expr_marks(const sc_expr *e, rp_timeline *t, uint32_t line)
{
    if (!e)
        return 0;
    uint8_t m = 0;
    if (e->kind == E_CALL && e->id == B_GC)
        m |= RP_TL_GC;
    if (e->kind == E_CALL && e->id == B_MARK) {
        m |= RP_TL_MARK;
        if (e->nargs == 1 && e->args[0]->kind == E_STR)
            rp_timeline_set_label(t, line, e->args[0]->name, e->args[0]->slen);
    }
    if (e->kind == E_METHOD && e->word && e->word->mk == MK_SWEEP)
        m |= RP_TL_SWEEP;
    m |= expr_marks(e->recv, t, line);
    for (uint16_t i = 0; i < e->nargs; i++)
        m |= expr_marks(e->args[i], t, line);
    for (uint16_t i = 0; i < e->nkw; i++)
        m |= expr_marks(e->kwvals[i], t, line);
    return m;
}

static void stmt_marks(sc_stmt *const *v, uint32_t n, rp_timeline *t)
{
    static const uint8_t of_kind[] = {[S_DEL] = RP_TL_DEL, [S_EXPECT] = RP_TL_EXPECT,
                                      [S_CHECKPOINT] = RP_TL_CHECKPOINT};
    for (uint32_t i = 0; i < n; i++) {
        const sc_stmt *s = v[i];
        uint8_t m = s->kind < sizeof of_kind ? of_kind[s->kind] : 0;
        m |= expr_marks(s->e, t, s->line) | expr_marks(s->target, t, s->line);
        if (s->line < RP_TIMELINE_LINES)
            t->marks[s->line] |= m;
        stmt_marks(s->body, s->nbody, t);
    }
}

void sc_program_marks(const sc_program *p, rp_timeline *t)
{
    if (!t->marks)
        return;
    if (!p->parked) {
        stmt_marks(p->top, p->ntop, t);
        return;
    }
    sc_program *q = sc_unpark(p);
    if (q)
        stmt_marks(q->top, q->ntop, t);
    sc_program_free(q);
}
