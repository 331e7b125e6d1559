/* Scenario file model and the pure (no I/O except file loading) parts of the
 * system-test runner: parsing *.scn files, encoding commands, mapping received
 * events to positional tokens and comparing them. Format:
 * ../shared/spec/scenarios.md, parameter order: ../shared/spec/protocol.md. */
#ifndef SOPRA_SCENARIO_H
#define SOPRA_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "sopra/xalloc.h" /* xmalloc, xrealloc, xstrdup, xmemdup0 */

/* Kind of a positional argument. Scenario tokens: a bare integer is TOK_INT,
 * bare true/false is TOK_BOOL, anything else (bare word or "quoted") is
 * TOK_STR. Received JSON values map the same way; null is TOK_NULL, floats,
 * arrays, objects and unexpected extra fields are TOK_OTHER (never equal to a
 * scenario token). */
typedef enum { TOK_INT, TOK_BOOL, TOK_STR, TOK_NULL, TOK_OTHER } tok_kind;

typedef struct {
    tok_kind kind;
    bool quoted; /* scenario tokens only: written as "..." */
    char *text;  /* unescaped text; ints as written / as %lld */
} token;

typedef struct {
    token *v;
    size_t n, cap;
} toklist;

typedef enum {
    STEP_SEND,   /* N > Command args    (data = encoded JSON line) */
    STEP_RAW,    /* N >> bytes          (data = raw bytes) */
    STEP_EXPECT, /* N < Event args */
    STEP_ANY,    /* N < ? */
    STEP_CLOSED, /* N closed */
    STEP_EXIT    /* exit 0 | nonzero | K */
} step_kind;

typedef enum { EXIT_CODE, EXIT_NONZERO } exit_mode;

typedef struct {
    step_kind kind;
    int line;     /* 1-based line number in the .scn */
    int client;   /* client number as written (not an index); -1 for exit */
    char *name;   /* command / event name (NULL for raw/closed/exit/any) */
    toklist args; /* command / event arguments */
    char *data;   /* SEND/RAW bytes to write */
    size_t len;
    exit_mode emode;
    int ecode;
} step;

typedef struct {
    char *config_name; /* as written in the header */
    char *config_path; /* resolved relative to the .scn's directory */
    long long seed;
    bool have_seed;
    int *clients;
    size_t nclients;
    bool have_clients;
    char *rules; /* NULL: not given (no --rules passed) */
    long timeout;
    step *steps;
    size_t nsteps, cap;
} scenario;

#define SCN_ERRLEN 512

/* Parse scenario text. dir: directory of the .scn (for the config path).
 * Returns 0 on success; on error fills err ("line N: ...") and returns -1
 * (the scenario is freed). */
int scn_parse(const char *text, const char *dir, scenario *out, char *err, size_t errlen);
/* Read and parse a file. */
int scn_load(const char *path, scenario *out, char *err, size_t errlen);
void scn_free(scenario *s);

/* Tokenize one line (no newline): whitespace separated, "quoted" strings with
 * \" and \\ escapes, '#' outside quotes starts a comment. On error
 * the partial result is freed. */
int scn_tokenize(const char *line, toklist *out, char *err, size_t errlen);
/* Decode the text of a `>>` step: \n \r \t \0 \\ \xHH. Result is malloc'd. */
int scn_unescape_raw(const char *s, char **out, size_t *outlen, char *err, size_t errlen);
/* Encode a command with positional args as one JSON line ending in "\n". */
char *scn_encode_command(const char *name, const toklist *args, size_t *outlen, char *err,
                         size_t errlen);

/* Map a received event object to its name and positional tokens (protocol.md
 * table order; absent optional parameters are left out; unknown extra fields
 * are appended as TOK_OTHER "key=value"). Returns -1 if obj is not an event. */
int scn_event_tokens(const cJSON *obj, const char **name, toklist *out, char *err,
                     size_t errlen);
/* Parameter names of an event / command, NULL-terminated; NULL if unknown. */
const char *const *scn_event_params(const char *name);
const char *const *scn_command_params(const char *name);

bool scn_token_equal(const token *a, const token *b);
bool scn_tokens_equal(const toklist *a, const toklist *b);
/* "Name arg arg..." in scenario syntax (strings quoted when needed). */
char *scn_render(const char *name, const toklist *t);
/* Describe the first difference between two JSON values ("$.a[3].b: ...").
 * Returns false if equal. */
bool scn_json_diff(const cJSON *want, const cJSON *got, char *buf, size_t buflen);

void toklist_free(toklist *t);
int toklist_push(toklist *t, tok_kind kind, bool quoted, const char *text, size_t len);

/* Small growable string used for logs and messages. */
typedef struct {
    char *s;
    size_t n, cap;
} strbuf;
void sb_add(strbuf *b, const char *s, size_t n);
void sb_puts(strbuf *b, const char *s);
void sb_printf(strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sb_free(strbuf *b);

/* Self test of the parsing / mapping code; returns number of failures. */
int scn_self_test(void);

#endif
