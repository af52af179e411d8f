/* hp_path.c - retained records: reasons, shortest paths (elided past
 * HP_PATH_EDGES edges), path shapes and grouping.
 *
 * A path is a sequence of edges: either a tree chain (a BFS tree of the
 * snapshot, from a root's target or from the source of a leaked part down to
 * the object) or a materialized cycle, optionally followed by one weak edge
 * (to a zombie). Long chains are never walked whole: the first HP_PATH_HEAD
 * edges come from the node's ancestor at depth HP_PATH_HEAD (g->anc), the
 * last ones from walking up, so a path costs O(HP_PATH_EDGES).
 */
#include "heap/hp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/al.h"
#include "core/er.h"

const char *hp_reason_name(hp_reason r)
{
    switch (r) {
    case HP_REACHABLE: return "reachable";
    case HP_UNREACHABLE: return "unreachable";
    case HP_STALE_MEMO: return "stale-memo";
    case HP_PENDING_STORAGE: return "pending-storage";
    case HP_REFCOUNT_LEAK: return "refcount-leak";
    case HP_UNTRACED: return "untraced";
    }
    return "?";
}

/* --- path records ---------------------------------------------------------- */

/* lens[i] = strlen(elems[i]) + 1, or lens NULL */
static int set_path(hp_retained *r, const char *const *elems, const size_t *lens, size_t n)
{
    size_t bytes = n * sizeof(char *);
    for (size_t i = 0; i < n; i++)
        bytes += lens ? lens[i] : strlen(elems[i]) + 1;
    char **block = NULL;
    if (n) {
        block = al_malloc(bytes, AL_K_HEAP, "hp_path");
        if (!block)
            return er_set(ER_OOM, "out of memory building a retention path");
        char *p = (char *)(block + n);
        for (size_t i = 0; i < n; i++) {
            size_t len = lens ? lens[i] : strlen(elems[i]) + 1;
            memcpy(p, elems[i], len);
            block[i] = p;
            p += len;
        }
    }
    hp_retained_clear(r);
    r->path = block;
    r->path_len = n;
    r->path_alloc = n ? bytes : 0;
    return 0;
}

int hp_retained_set_path(hp_retained *r, const char *const *elems, size_t n)
{
    return set_path(r, elems, NULL, n);
}

void hp_retained_clear(hp_retained *r)
{
    if (!r)
        return;
    if (r->path)
        al_free(r->path, r->path_alloc, AL_K_HEAP);
    r->path = NULL;
    r->path_len = 0;
    r->path_alloc = 0;
    r->fold_hops = 0;
}

void hp_retained_free(hp_retained *r, size_t n)
{
    if (!r)
        return;
    for (size_t i = 0; i < n; i++)
        hp_retained_clear(&r[i]);
    al_free(r, (n ? n : 1) * sizeof *r, AL_K_HEAP);
}

/* --- path elements --------------------------------------------------------- */

enum { PE_TEXT, PE_SEDGE, PE_WEDGE, PE_NODE, PE_ELIDE };

typedef struct pel {
    int kind;
    uint32_t a;          /* edge or node */
    uint64_t count;      /* PE_ELIDE */
    const char *s;       /* PE_TEXT */
} pel;

enum { MAX_PEL = HP_PATH_EDGES + 4 };

typedef struct seq {
    const uint32_t *list; size_t nlist;   /* strong edges, in order */
    uint32_t chain_end; uint32_t nchain;  /* tree chain ending there */
    uint32_t weak;                        /* weak edge appended, or HP_NONE */
} seq;

static void put(pel *el, size_t *k, int kind, uint32_t a)
{
    el[*k].kind = kind;
    el[*k].a = a;
    el[*k].count = 0;
    el[*k].s = NULL;
    (*k)++;
}

/* The m edges above node x (m <= depth), top first. */
static void chain_up(const hp_graph *g, uint32_t x, size_t m, pel *el, size_t *k)
{
    size_t base = *k;
    for (size_t i = 0; i < m; i++) {
        el[base + m - 1 - i].kind = PE_SEDGE;
        el[base + m - 1 - i].a = g->pedge[x];
        el[base + m - 1 - i].count = 0;
        el[base + m - 1 - i].s = NULL;
        x = HP_PNODE(g, x);
    }
    *k = base + m;
}

static void emit_seq(const hp_graph *g, const seq *s, pel *el, size_t *k)
{
    size_t w = s->weak != HP_NONE;
    size_t base = s->nlist + s->nchain;
    size_t total = base + w;
    if (total <= HP_PATH_EDGES) {
        for (size_t i = 0; i < s->nlist; i++)
            put(el, k, PE_SEDGE, s->list[i]);
        chain_up(g, s->chain_end, s->nchain, el, k);
    } else {
        /* base >= HP_PATH_EDGES > HP_PATH_HEAD + HP_PATH_TAIL */
        size_t tail = HP_PATH_TAIL - w;
        if (s->nlist) {
            for (size_t i = 0; i < HP_PATH_HEAD; i++)
                put(el, k, PE_SEDGE, s->list[i]);
        } else {
            chain_up(g, hp_anc(g, s->chain_end), HP_PATH_HEAD, el, k);
        }
        el[*k].kind = PE_ELIDE;
        el[*k].count = total - HP_PATH_HEAD - HP_PATH_TAIL;
        el[*k].s = NULL;
        (*k)++;
        if (s->nlist) {
            for (size_t i = base - tail; i < base; i++)
                put(el, k, PE_SEDGE, s->list[i]);
        } else {
            chain_up(g, s->chain_end, tail, el, k);
        }
    }
    if (w)
        put(el, k, PE_WEDGE, s->weak);
}

/* Shortest cycle through x inside its (small) strongly connected part:
 * edges into out[], returns their number. */
static size_t small_cycle(const hp_graph *g, uint32_t x, uint32_t *out)
{
    uint32_t q[HP_SMALL_SCC], from[HP_SMALL_SCC], via[HP_SMALL_SCC];
    const hp_edges *E = &g->strong;
    size_t qt = 1;
    q[0] = x;
    for (size_t qh = 0; qh < qt; qh++) {
        uint32_t u = q[qh];
        for (uint32_t k = E->off[u]; k < E->off[u + 1]; k++) {
            uint32_t w = E->e[k].dst;
            if (HP_REGION(g, w) != HP_R_UNREACH || g->scc[w] != g->scc[x])
                continue;
            if (w == x) {
                size_t len = 0;
                for (size_t at = qh; at != 0; at = from[at])
                    len++;
                out[len] = k;
                size_t i = len;
                for (size_t at = qh; at != 0; at = from[at])
                    out[--i] = via[at];
                return len + 1;
            }
            size_t j = 0;
            while (j < qt && q[j] != w)
                j++;
            if (j < qt || qt == HP_SMALL_SCC)
                continue;
            q[qt] = w;
            from[qt] = (uint32_t)qh;
            via[qt] = k;
            qt++;
        }
    }
    return 0;
}

/* Shortest cycle through the representative r of a big part: an allocated
 * edge list (*out, *len; capacity *cap). 0 or -1. */
static int big_cycle(hp_graph *g, uint32_t r, uint32_t **out, size_t *len, size_t *cap)
{
    size_t n = g->n;
    if (!g->tmark) {
        g->tmark = hp_xalloc(n, sizeof *g->tmark);
        g->tq = hp_xalloc(n, sizeof *g->tq);
        g->tpar = hp_xalloc(n, sizeof *g->tpar);
        if (!g->tmark || !g->tq || !g->tpar) {
            hp_xfree(g->tmark, n, sizeof *g->tmark);
            hp_xfree(g->tq, n, sizeof *g->tq);
            hp_xfree(g->tpar, n, sizeof *g->tpar);
            g->tmark = g->tq = g->tpar = NULL;
            return -1;
        }
        memset(g->tmark, 0, n * sizeof *g->tmark);
        g->tgen = 0;
    }
    uint32_t gen = ++g->tgen;
    const hp_edges *E = &g->strong;
    size_t qt = 0;
    g->tq[qt++] = r;
    g->tmark[r] = gen;
    g->tpar[r] = HP_NONE;
    for (size_t qh = 0; qh < qt; qh++) {
        uint32_t u = g->tq[qh];
        for (uint32_t k = E->off[u]; k < E->off[u + 1]; k++) {
            uint32_t w = E->e[k].dst;
            if (HP_REGION(g, w) != HP_R_UNREACH || g->scc[w] != g->scc[r])
                continue;
            if (w == r) {
                size_t m = 1;
                for (uint32_t at = u; at != r; at = E->e[g->tpar[at]].src)
                    m++;
                *cap = m;
                *out = hp_xalloc(m, sizeof **out);
                if (!*out)
                    return -1;
                *len = m;
                (*out)[m - 1] = k;
                size_t i = m - 1;
                for (uint32_t at = u; at != r; at = E->e[g->tpar[at]].src)
                    (*out)[--i] = g->tpar[at];
                return 0;
            }
            if (g->tmark[w] == gen)
                continue;
            g->tmark[w] = gen;
            g->tpar[w] = k;
            g->tq[qt++] = w;
        }
    }
    *len = 0;
    return 0;
}

/* Formatting into g->buf: element i starts at off[i]. */
static int buf_reserve(hp_graph *g, size_t need)
{
    if (al_reserve(&g->buf, &g->buf_cap, need, 1, 256, AL_K_HEAP, "hp_buf") != 0)
        return er_set(ER_OOM, "out of memory formatting a retention path");
    return 0;
}

/* Appenders for format_path (room is reserved beforehand). */
static char *put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* An attribute edge out of a type with its own spelling (obj_type.attr_spelling). */
static int spelled(const obj_type *t, const char *lab)
{
    return t->attr_spelling && strncmp(lab, OBJ_ATTR_LABEL, OBJ_ATTR_LABEL_LEN) == 0;
}

/* Which of el[0..k) are edges out of a converter, or attributes the
 * program spells its own way, folded into the hop before them
 * (hp_retained.fold_hops). */
static uint32_t folded_hops(const hp_graph *g, const pel *el, size_t k)
{
    uint32_t m = 0;
    for (size_t i = 0; i < k && i < 32; i++) {
        if (el[i].kind != PE_SEDGE && el[i].kind != PE_WEDGE)
            continue;
        const hp_edge *e = el[i].kind == PE_SEDGE ? &g->strong.e[el[i].a] : &g->weak.e[el[i].a];
        const obj_type *t = g->objs[e->src]->type;
        if (t->kind == OBJ_FAKE_CONVERTER || t->kind == OBJ_META_CONVERTER || spelled(t, g->labels[e->label]))
            m |= 1u << i;
    }
    return m;
}

static int format_path(hp_graph *g, const pel *el, size_t k, hp_retained *out)
{
    size_t off[MAX_PEL], lens[MAX_PEL], used = 0;
    for (size_t i = 0; i < k; i++) {
        const char *lab = "", *type = "";
        const obj *o = NULL;
        const hp_edge *e = NULL;
        if (el[i].kind == PE_SEDGE || el[i].kind == PE_WEDGE) {
            e = el[i].kind == PE_SEDGE ? &g->strong.e[el[i].a] : &g->weak.e[el[i].a];
            o = g->objs[e->src];
            lab = g->labels[e->label];
            type = o->type->name ? o->type->name : "?";
        } else if (el[i].kind == PE_NODE) {
            o = g->objs[el[i].a];
            type = obj_kind_name(o->type->kind);
        }
        size_t need = used + strlen(lab) + strlen(type) + (el[i].s ? strlen(el[i].s) : 0) + 64 +
                      (o && o->type->attr_spelling ? strlen(o->type->attr_spelling) : 0);
        if (buf_reserve(g, need) != 0)
            return -1;
        char *start = g->buf + used, *p = start;
        switch (el[i].kind) {
        case PE_TEXT:
            p = put_str(p, el[i].s);
            break;
        case PE_SEDGE:
        case PE_WEDGE:
            p = put_str(p, type);
            *p++ = '#';
            p = put_u64(p, o->id);
            *p++ = '.';
            if (spelled(o->type, lab)) {
                p = put_str(p, o->type->attr_spelling);
                lab += OBJ_ATTR_LABEL_LEN;
            }
            p = put_str(p, lab);
            if (e->index >= 0) {
                *p++ = '[';
                p = put_u64(p, (uint64_t)e->index);
                *p++ = ']';
            }
            break;
        case PE_NODE:
            p = put_str(p, type);
            *p++ = '#';
            p = put_u64(p, o->id);
            break;
        default:
            p = put_str(p, "... ");
            p = put_u64(p, el[i].count);
            p = put_str(p, " more ...");
            break;
        }
        *p++ = '\0';
        off[i] = used;
        lens[i] = (size_t)(p - start);
        used += lens[i];
    }
    const char *ptrs[MAX_PEL];
    for (size_t i = 0; i < k; i++)
        ptrs[i] = g->buf + off[i];
    return set_path(out, ptrs, lens, k);
}

/* out's path and its converter hops from el[0..k). */
static int set_elems(hp_graph *g, const pel *el, size_t k, hp_retained *out)
{
    int rc = format_path(g, el, k, out);
    if (rc == 0)
        out->fold_hops = folded_hops(g, el, k);
    return rc;
}

static const char *tree_root_name(const hp_graph *g, uint32_t v, hp_retained *out)
{
    uint32_t x = hp_anc(g, v);
    while (HP_PNODE(g, x) != HP_NONE)
        x = HP_PNODE(g, x);
    out->root = g->pedge[x] < g->nroots ? HP_RK_PROGRAM : HP_RK_FINALIZERS;
    out->root_len = g->pedge[x] < g->nroots ? g->roots[g->pedge[x]].var_len : 0;
    return hp_root_name(g, g->pedge[x]);
}

static int build_path(hp_graph *g, uint32_t v, hp_retained *out)
{
    pel el[MAX_PEL];
    size_t k = 0;
    uint32_t holder = v, weak = HP_NONE;
    out->root_len = 0;
    if (HP_REGION(g, v) == HP_R_ZOMBIE) {
        weak = g->zedge[v - g->nlive];
        if (weak == HP_NONE) {
            el[k].kind = PE_TEXT;
            el[k++].s = "weak";
            put(el, &k, PE_NODE, v);
            out->root = HP_RK_WEAK;
            return set_elems(g, el, k, out);
        }
        holder = g->weak.e[weak].src;
        out->weak_holder = g->objs[holder]->id;
    }
    seq s = {NULL, 0, holder, 0, weak};
    uint32_t small[HP_SMALL_SCC], *big = NULL;
    size_t nbig = 0, bigcap = 0;
    el[k].kind = PE_TEXT;
    el[k].s = NULL;
    if (HP_REGION(g, holder) == HP_R_REACH) {
        el[k++].s = tree_root_name(g, holder, out);
        s.nchain = g->depth[holder];
    } else {
        el[k++].s = "unreachable";
        out->root = HP_RK_UNREACHABLE;
        int cyc = hp_scc_cyclic(g, holder) && hp_scc_source(g, holder);
        if (cyc && hp_scc_size(g, holder) <= HP_SMALL_SCC) {
            s.list = small;
            s.nlist = small_cycle(g, holder, small);
        } else if (cyc && hp_scc_rep(g, holder) == holder) {
            if (big_cycle(g, holder, &big, &nbig, &bigcap) != 0)
                return -1;
            s.list = big;
            s.nlist = nbig;
        } else {
            s.nchain = g->depth[holder];
        }
    }
    emit_seq(g, &s, el, &k);
    put(el, &k, PE_NODE, v);
    int rc = set_elems(g, el, k, out);
    hp_xfree(big, bigcap, sizeof *big);
    return rc;
}

int hp_fill_record(hp_graph *g, uint32_t v, hp_retained *r)
{
    const obj *o = g->objs[v];
    r->id = o->id;
    r->kind = o->type->kind;
    r->type_name = o->type->name;
    r->site = obj_site_of(o);
    r->bytes = hp_self(g, v);
    r->retained_bytes = g->ret[v];
    r->strong = o->strong;
    r->found = (g->region[v] & HP_F_LEAK) ? hp_found(g, v) : 0;
    switch (HP_REGION(g, v)) {
    case HP_R_REACH: r->reason = HP_REACHABLE; break;
    case HP_R_UNREACH:
        r->reason = (g->region[v] & HP_F_LEAK) ? HP_REFCOUNT_LEAK : HP_UNREACHABLE;
        break;
    default:
        r->reason = g->zpend[v - g->nlive] ? HP_PENDING_STORAGE : HP_STALE_MEMO;
        break;
    }
    if (hp_holders(g) != 0)
        return -1;
    r->holder = hp_holder_at(g, v);
    r->describe[0] = '\0';
    if (v < g->nlive && o->type->describe) {
        o->type->describe(o, r->describe, sizeof r->describe);
        r->describe[sizeof r->describe - 1] = '\0';
    }
    return build_path(g, v, r);
}

typedef struct okey {
    uint64_t ret, id;
    uint32_t v;
} okey;

static int okey_cmp(const void *a, const void *b)
{
    const okey *x = a, *y = b;
    if (x->ret != y->ret)
        return x->ret > y->ret ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int hp_retained_all(hp_graph *g, hp_retained **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (hp_analyze(g) != 0)
        return -1;
    if (g->n == 0)
        return 0;
    okey *keys = hp_xalloc(g->n, sizeof *keys);
    if (!keys)
        return -1;
    for (uint32_t v = 0; v < g->n; v++) {
        keys[v].ret = g->ret[v];
        keys[v].id = g->objs[v]->id;
        keys[v].v = v;
    }
    qsort(keys, g->n, sizeof *keys, okey_cmp);
    hp_retained *r = hp_xalloc(g->n, sizeof *r);
    if (!r) {
        hp_xfree(keys, g->n, sizeof *keys);
        return -1;
    }
    memset(r, 0, g->n * sizeof *r);
    for (size_t i = 0; i < g->n; i++) {
        if (hp_fill_record(g, keys[i].v, &r[i]) != 0) {
            hp_retained_free(r, g->n);
            hp_xfree(keys, g->n, sizeof *keys);
            return -1;
        }
    }
    hp_xfree(keys, g->n, sizeof *keys);
    *out = r;
    *n = g->n;
    return 0;
}

int hp_retained_one(hp_graph *g, const obj *o, hp_retained *out)
{
    memset(out, 0, sizeof *out);
    if (hp_analyze(g) != 0)
        return -1;
    uint32_t v = hp_lookup(g, o);
    if (v == HP_NONE)
        return er_set(ER_INTERNAL, "hp_retained_one: object not in the snapshot");
    if (hp_fill_record(g, v, out) != 0) {
        hp_retained_clear(out);
        return -1;
    }
    return 0;
}

/* --- shapes ---------------------------------------------------------------- */

typedef struct sbuf {
    char *buf;
    size_t cap, len;
} sbuf;

static void sb_putc(sbuf *b, char c)
{
    if (b->len + 1 < b->cap)
        b->buf[b->len] = c;
    b->len++;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static void shape_elem(sbuf *b, const char *s)
{
    if (s[0] == '.' && s[1] == '.' && s[2] == '.' && s[3] == ' ') {
        sb_putc(b, '.'); sb_putc(b, '.'); sb_putc(b, '.');
        return;
    }
    while (*s) {
        if (s[0] == '#' && is_digit(s[1])) {
            s++;
            while (is_digit(*s))
                s++;
            continue;
        }
        if (s[0] == '[') {
            const char *t = s + 1;
            if (*t == '-')
                t++;
            if (is_digit(*t)) {
                while (is_digit(*t))
                    t++;
                if (*t == ']') {
                    s = t + 1;
                    continue;
                }
            }
        }
        sb_putc(b, *s++);
    }
}

size_t hp_path_shape(char *const *path, size_t n, char *buf, size_t cap)
{
    sbuf b = {buf, cap, 0};
    for (size_t i = 0; i < n; i++) {
        for (const char *sep = i ? HP_PATH_SEP : ""; *sep; sep++)
            sb_putc(&b, *sep);
        shape_elem(&b, path[i] ? path[i] : "");
    }
    if (cap)
        buf[b.len < cap ? b.len : cap - 1] = '\0';
    return b.len;
}

hp_path_it hp_path_walk(const char *joined)
{
    hp_path_it it;
    memset(&it, 0, sizeof it);
    it.next_ = joined ? joined : "";
    it.index = SIZE_MAX;   /* the first hp_path_next makes it 0 */
    return it;
}

int hp_path_next(hp_path_it *it)
{
    if (!it->next_)
        return 0;
    const char *sep = strstr(it->next_, HP_PATH_SEP);
    it->elem = it->next_;
    it->len = sep ? (size_t)(sep - it->elem) : strlen(it->elem);
    it->index++;
    it->last = sep == NULL;
    it->next_ = sep ? sep + HP_PATH_SEP_LEN : NULL;
    return 1;
}

/* --- grouping -------------------------------------------------------------- */

static int streq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static int group_cmp(const void *a, const void *b)
{
    const hp_group *x = a, *y = b;
    int tx = hp_holder_tier(x->holder), ty = hp_holder_tier(y->holder);
    if (tx != ty)
        return tx < ty ? -1 : 1;
    if (x->total_bytes != y->total_bytes)
        return x->total_bytes > y->total_bytes ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->example < y->example ? -1 : x->example > y->example;
}

void hp_groups_free(hp_group *g, size_t n)
{
    if (!g)
        return;
    for (size_t i = 0; i < n; i++)
        if (g[i].via)
            al_free(g[i].via, strlen(g[i].via) + 1, AL_K_HEAP);
    al_free(g, (n ? n : 1) * sizeof *g, AL_K_HEAP);
}

/* The records grouped so far, indexed by what makes a group. */
enum { HP_GROUPS0 = 64 };
typedef struct rgroups {
    hp_group *v; size_t n, cap;
    ix index;
    char *shape; size_t shape_cap;   /* the record's path shape */
} rgroups;

static uint64_t rec_hash(const hp_retained *x, const char *shape)
{
    return ix_hash_str(shape) ^ ix_hash_str(x->type_name) * 31 ^
           ix_hash_str(x->site.file) * 131 ^ (uint64_t)x->site.line * 0x9E3779B1u ^
           (uint64_t)x->kind << 3 ^ (uint64_t)x->reason << 7 ^ (uint64_t)x->holder << 11;
}

static int rec_eq(const void *ctx, uint32_t id, const void *key)
{
    const rgroups *rg = ctx;
    const hp_group *c = &rg->v[id];
    const hp_retained *x = key;
    return c->kind == x->kind && c->reason == x->reason && c->holder == x->holder &&
           c->site.line == x->site.line && streq(c->type_name, x->type_name) &&
           streq(c->site.file, x->site.file) && strcmp(c->via, rg->shape) == 0;
}

/* x's path shape into rg->shape: 0, or -1 out of memory. */
static int rec_shape(rgroups *rg, const hp_retained *x)
{
    size_t len = hp_path_shape(x->path, x->path_len, rg->shape, rg->shape_cap);
    if (len < rg->shape_cap)
        return 0;
    if (al_reserve(&rg->shape, &rg->shape_cap, len + 1, 1, 256, AL_K_HEAP, "hp_group") != 0)
        return -1;
    hp_path_shape(x->path, x->path_len, rg->shape, rg->shape_cap);
    return 0;
}

/* A new group for record i (x), its via the shape: the group, or NULL. */
static hp_group *rec_group_new(rgroups *rg, const hp_retained *x, size_t i, uint64_t h)
{
    char *via = NULL;
    if (al_grow(&rg->v, &rg->cap, rg->n, sizeof *rg->v, 16, AL_K_HEAP, "hp_group") != 0 ||
        !(via = al_strdup(rg->shape, AL_K_HEAP, "hp_group_via")))
        return NULL;
    hp_group *g = &rg->v[rg->n];
    *g = (hp_group){.kind = x->kind, .type_name = x->type_name, .site = x->site,
                    .reason = x->reason, .holder = x->holder, .via = via, .example = i,
                    .nexamples = 1};
    if (ix_add(&rg->index, h, (uint32_t)rg->n) != 0) {
        al_free(via, strlen(via) + 1, AL_K_HEAP);
        return NULL;
    }
    rg->n++;
    return g;
}

static int rec_group_all(rgroups *rg, const hp_retained *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const hp_retained *x = &r[i];
        if (rec_shape(rg, x) != 0)
            return -1;
        uint64_t h = rec_hash(x, rg->shape);
        uint32_t id = ix_find(&rg->index, h, rec_eq, rg, x);
        hp_group *hit = id != IX_NONE ? &rg->v[id] : rec_group_new(rg, x, i, h);
        if (!hit)
            return -1;
        hit->count++;
        hit->total_bytes += x->bytes;
        hit->total_retained += x->retained_bytes;
    }
    return 0;
}

int hp_group_records(const hp_retained *r, size_t n, hp_group **out, size_t *ngroups)
{
    *out = NULL;
    *ngroups = 0;
    if (n == 0)
        return 0;
    rgroups rg = {NULL, 0, 0, IX_INIT(AL_K_HEAP, "hp_group"), NULL, 256};
    int rc = -1;
    /* groups are few: room for 64 (or n) at once, more only if it must */
    if (ix_reserve(&rg.index, n < HP_GROUPS0 ? n : HP_GROUPS0) == 0)
        rg.shape = al_malloc(rg.shape_cap, AL_K_HEAP, "hp_group");
    if (!rg.shape || rec_group_all(&rg, r, n) != 0) {
        er_set(ER_OOM, "out of memory grouping retained objects");
        goto out;
    }
    for (size_t i = 0; i < rg.n; i++)
        rg.v[i].bytes_each = rg.v[i].total_bytes / rg.v[i].count;
    qsort(rg.v, rg.n, sizeof *rg.v, group_cmp);
    *out = hp_xalloc(rg.n, sizeof **out);
    if (!*out)
        goto out;
    memcpy(*out, rg.v, rg.n * sizeof *rg.v);
    *ngroups = rg.n;
    rg.n = 0;   /* the vias now belong to *out */
    rc = 0;
out:
    for (size_t i = 0; i < rg.n; i++)
        al_free(rg.v[i].via, strlen(rg.v[i].via) + 1, AL_K_HEAP);
    if (rg.v)
        al_free(rg.v, rg.cap * sizeof *rg.v, AL_K_HEAP);
    if (rg.shape)
        al_free(rg.shape, rg.shape_cap, AL_K_HEAP);
    ix_free(&rg.index);
    return rc;
}
