/* sc_int.h - internals of the scenario module shared by the lexer, parser,
 * interpreter and runner. Not a public header. */
#ifndef FAKEGC_SC_INT_H
#define FAKEGC_SC_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scenario/sc.h"

/* ---- arena: every AST byte, freed at once ---- */
typedef struct sc_chunk sc_chunk;
typedef struct sc_arena {
    sc_chunk *head;
    size_t used, cap;        /* in head */
    size_t total;            /* bytes of every chunk */
    int failed;              /* an allocation failed (ER_OOM set) */
} sc_arena;
void *sc_arena_alloc(sc_arena *a, size_t n);          /* zeroed, 8-aligned */
char *sc_arena_strndup(sc_arena *a, const char *s, size_t n);
void sc_arena_free(sc_arena *a);

/* ---- tokens ---- */
typedef enum sc_tok_kind {
    T_EOF, T_NEWLINE, T_NAME, T_KEYWORD, T_INT, T_STRING,
    T_LPAREN, T_RPAREN, T_COMMA, T_DOT, T_ASSIGN,
    T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE,
    T_PLUS, T_MINUS, T_STAR, T_FLOORDIV,   /* size expressions (2*s0 + 1) */
    T_ERROR                  /* lexical error; message in the lexer */
} sc_tok_kind;

typedef enum sc_keyword {
    K_DEL, K_EXPECT, K_REPEAT, K_WITH, K_END, K_CONFIG, K_CHECKPOINT,
    K_TRUE, K_FALSE, K_NONE, K_COUNT
} sc_keyword;
extern const char *const sc_keyword_names[K_COUNT];

typedef struct sc_token {
    sc_tok_kind kind;
    uint32_t line, col;      /* 1-based; col in code points */
    const char *start;       /* into the source */
    size_t len;              /* bytes */
    int64_t ival;            /* T_INT */
    int kw;                  /* T_KEYWORD: sc_keyword */
    char *sval;              /* T_STRING: unescaped, in the arena */
    size_t slen;
} sc_token;

typedef struct sc_lexer {
    const char *src, *end;
    const char *p;           /* next byte */
    const char *line_start;
    uint32_t line;
    uint32_t col;            /* col of p, code points, 1-based */
    sc_arena *arena;
    char msg[160];           /* T_ERROR message */
    uint32_t err_line, err_col;
} sc_lexer;

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid. */
size_t sc_utf8_len(const unsigned char *p, const unsigned char *end);
void sc_lex_init(sc_lexer *lx, const char *src, size_t len, sc_arena *a);
/* Next token. Comments are skipped; a T_NEWLINE ends every line (also the
 * last one, before T_EOF). On T_ERROR the lexer has skipped to the end of
 * the line (the next token is T_NEWLINE or T_EOF). */
sc_token sc_lex_next(sc_lexer *lx);
/* Describes a token for messages: "'foo'", "end of line", "'('". */
void sc_tok_describe(const sc_token *t, char *buf, size_t n);

/* ---- values the interpreter handles ---- */
typedef enum sc_vkind {
    V_NONE, V_INT, V_BOOL, V_STR, V_DTYPE, V_OBJ,
    V_TUPLE,                 /* version 2: integers (t.size(), (2, 3)) */
    V_MFMT                   /* version 2: a memory format (ts_memfmt) */
} sc_vkind;

/* ---- expressions ---- */
typedef enum sc_ekind {
    E_INT, E_BOOL, E_NONE, E_STR, E_DTYPE, E_VAR, E_TUPLE,
    E_MFMT,       /* contiguous_format / channels_last: sub = ts_memfmt */
    E_CALL,       /* built-in function: id = sc_builtin */
    E_METHOD,     /* recv.name(args): id = sc_method */
    E_ATTR,       /* recv.name: id = sc_attr */
    E_CMP,        /* args[0] op args[1]: id = sc_cmp */
    E_RAISES,     /* raises(ERROR, args[0]): ival = er_kind */
    E_ARITH,      /* args[0] op args[1]: sub = '+', '-', '*' or '/' (floor division) */
    E_SYM         /* sN, a symbol of the `with` mode's ShapeEnv: ival = N */
} sc_ekind;

typedef enum sc_cmp { C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE } sc_cmp;

typedef enum sc_builtin {
    B_EMPTY, B_ZEROS, B_ONES, B_RAND, B_EMPTY_STRIDED, B_SPARSE_COO,
    B_SPARSE_CSR, B_QUANTIZED, B_FAKE_MODE, B_META_CONVERTER, B_WEAKREF,
    B_GC, B_LIVE, B_BYTES, B_HEAP_BYTES, B_UNREACHABLE, B_STALE, B_GROWTH,
    B_ALIVE, B_DEAD, B_RAISES, B_FAKE_CONVERTER, B_WEAKREFS, B_HOLD, B_AT, B_VERDICT,
    B_MARK,
    B_SHAPE_ENV, B_FAKE_CACHE, B_TRACER,   /* version 3 */
    B_INFERENCE_MODE,                       /* version 3, pytorch-2.14 */
    B_GRAPH_MODULE,                         /* version 3 */
    B_OP_OUT,                               /* version 3 */
    B_COUNT
} sc_builtin;

/* What a method's receiver must be: MK_OP a tensor; MK_QUERY and MK_VALUE
 * a tensor or a storage; the others check it themselves. */
typedef enum sc_mkind {
    MK_OP, MK_QUERY, MK_FAKE, MK_META, MK_SWEEP, MK_GET,
    MK_VALUE,     /* version 2: a query whose answer is not an integer */
    MK_OBJ        /* version 3: a method of a mode, tracer or cache */
} sc_mkind;

typedef enum sc_attr {
    A_USER, A_GRAD, A_MEMO_FAKE, A_MEMO_META, A_MEMO_STORAGE, A_PENDING,
    A_HITS, A_MISSES, A_SWEEP_EVERY, A_CHECK_COUNT,
    A_MEMO_TENSOR_IDS, A_MEMO_STORAGE_IDS, A_MEMO_CONSTANTS,  /* version 3 */
    A_CACHE_SIZE, A_TRACKED, A_SIZE, A_BYPASSES,
    A_UNBACKED, A_EPOCH,                     /* version 3, pytorch-2.14 */
    A_SYMBOLS                                /* version 3: a ShapeEnv's backed symbols */
} sc_attr;

typedef struct sc_pos { uint32_t line, col; } sc_pos;

typedef struct sc_expr sc_expr;
struct sc_word;
struct sc_expr {
    uint8_t kind;            /* sc_ekind */
    uint8_t op_out;          /* E_CALL of a constructor inside op_out(): an op's
                                output written by its geometry, not a constructor */
    uint32_t line, col;
    int id;                  /* builtin / method index / attr / cmp */
    int sub;                 /* method: ts_op or ts_query; E_DTYPE: ts_dtype */
    int64_t ival;            /* E_INT, E_BOOL, E_RAISES error kind */
    const char *name;        /* method/attr/var name; E_STR text */
    size_t slen;             /* E_STR length */
    uint32_t slot;           /* E_VAR */
    sc_expr *recv;           /* E_METHOD, E_ATTR */
    uint16_t nargs, nkw;
    sc_expr **args;          /* positional (E_TUPLE: elements) */
    const char **kwnames;
    sc_expr **kwvals;
    sc_pos *kwpos;           /* where each keyword is written */
    /* E_CALL, E_RAISES, E_METHOD, E_ATTR (not a user attribute): the word's
     * vocabulary row, found once by the parser for the dispatch */
    const struct sc_word *word;
};

/* ---- statements ---- */
typedef enum sc_skind {
    S_ASSIGN, S_STORE, S_DEL, S_EXPR, S_EXPECT, S_CHECKPOINT, S_REPEAT, S_WITH
} sc_skind;

typedef struct sc_stmt sc_stmt;
struct sc_stmt {
    uint8_t kind;
    uint32_t line, col;
    uint32_t text_off, text_len;   /* the statement as written (no comment) */
    uint32_t slot;                 /* S_ASSIGN; S_CHECKPOINT: checkpoint index */
    sc_expr *target;               /* S_STORE: the receiver; name = attr */
    const char *attr;              /* S_STORE */
    int attr_id;                   /* S_STORE: sc_attr */
    sc_expr *e;                    /* value / condition / repeat count / mode */
    const char *msg;               /* S_EXPECT message or NULL */
    uint32_t *slots; uint32_t nslots;   /* S_DEL */
    sc_stmt **body; uint32_t nbody;     /* S_REPEAT, S_WITH */
};

struct sc_program {
    sc_arena arena;
    char *file;                    /* interned */
    char *src; size_t len;         /* copy of the text */
    sc_stmt **top; uint32_t ntop;
    uint32_t nvars;
    const char **var_names;        /* slot -> name */
    uint32_t ncheckpoints;
    const char **checkpoint_names;
    size_t nstatements;            /* every statement, nested included */
    /* config: -1 when not given */
    int cfg_gc, cfg_sweep, cfg_end_check;
    int cfg_compat;                /* fk_design_id, or -1 */
    const char *cfg_suppress;      /* config suppress: a rules file, or NULL */
    const char *cfg_recording;     /* config recording: the recorded program, or NULL */
    /* the rules files named by literals (config suppress, verdict(suppress=
     * "...")), read by the parser: a bad one is a parse error */
    struct sc_supp_file *supps;
    /* parked (sc_check_file): the arena is gone; file is an allocation of
     * its own, and the text's length and hash say whether a re-read file
     * is still the one checked */
    int parked;
    size_t text_len;
    uint64_t text_hash;
};
/* sc_run of a parked program: re-read, re-parse, run, free (sc_park.c). */
int sc_run_parked(const sc_program *p, const sc_options *o, rp_scenario *out);
/* A parked program parsed again (to free), or NULL when its file no longer
 * parses or is not the text checked. */
sc_program *sc_unpark(const sc_program *p);

/* ---- the vocabulary (sc_words.c): one row per word ---- */
typedef enum sc_wkind { SW_BUILTIN, SW_METHOD, SW_ATTR } sc_wkind;
typedef struct sc_vm sc_vm;
typedef struct sc_val sc_val;            /* sc_vm.h */
struct ts_args;
/* A word's argument parser and evaluator (sc_eval.h says how they run). */
typedef int sc_args_fn(sc_vm *vm, const sc_expr *e, struct ts_args *a, sc_val *held);
typedef int sc_eval_fn(sc_vm *vm, const sc_expr *e, const sc_val *recv,
                       const struct ts_args *a, sc_val *out);
enum {
    SWF_REAL_OK = 1,  /* a tensor op real tensors may enter inside `with` */
    SWF_CTOR = 2      /* a constructor: builds a fake inside `with`, op_out() takes it */
};
typedef struct sc_word {
    const char *name;
    uint8_t kind;                 /* sc_wkind */
    uint8_t mk;                   /* SW_METHOD: sc_mkind */
    int id;                       /* builtin: sc_builtin; attr: sc_attr */
    int min, max;                 /* positional arguments; max -1: any */
    const char *const *kw;        /* keyword arguments, NULL-terminated */
    int version;                  /* 1 or 2 */
    const char *no_stress;        /* NULL: `fakegc stress` generates it; else why not */
    const char *no_xref;          /* NULL: scripts/xref translates it; else why not */
    sc_args_fn *args;             /* NULL: the evaluator reads its arguments */
    sc_eval_fn *eval;
    uint8_t flags;                /* SWF_* */
} sc_word;
#define SC_MAX_WORDS 256
const sc_word *sc_vocab(size_t *n);
const sc_word *sc_builtin_row(int b);     /* sc_builtin order; NULL past B_COUNT */
size_t sc_nmethods(void);
const sc_word *sc_method_row(int m);      /* 0 <= m < sc_nmethods() */
size_t sc_nattrs(void);
const sc_word *sc_attr_row(int a);
const sc_word *sc_attr_word(int id);      /* by sc_attr (not A_USER) */
const char *sc_wkind_name(int k);         /* "function", "method", "attribute" */

/* Builtin and method names (sc_parse.c), for the interpreter's messages. */
const char *sc_builtin_name(int b);
const char *sc_method_name(int m);


#endif
