/* Scenario parsing, command encoding, event-to-token mapping. See scenario.h. */
#include "scenario.h"

#include "toolutil.h"
#include "scntoken.h"

#include "sopra/cmd_table.h"
#include "sopra/event_table.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- strings ------------------------------------------------------------ */

void sb_add(strbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        b->s = xrealloc(b->s, cap);
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

void sb_puts(strbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

void sb_printf(strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    char *tmp = xmalloc((size_t)n + 1);
    vsnprintf(tmp, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    sb_add(b, tmp, (size_t)n);
    free(tmp);
}

void sb_free(strbuf *b)
{
    free(b->s);
    b->s = NULL;
    b->n = b->cap = 0;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- tokens --------------------------------------------------------------- */

int toklist_push(toklist *t, tok_kind kind, bool quoted, const char *text, size_t len)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 8;
        t->v = xrealloc(t->v, t->cap * sizeof *t->v);
    }
    t->v[t->n].kind = kind;
    t->v[t->n].quoted = quoted;
    t->v[t->n].text = xmemdup0(text, len);
    t->n++;
    return 0;
}

void toklist_free(toklist *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].text);
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static tok_kind classify_bare(const char *s)
{
    if (scn_looks_int(s))
        return TOK_INT;
    if (!strcmp(s, "true") || !strcmp(s, "false"))
        return TOK_BOOL;
    return TOK_STR;
}

static int tokenize(const char *line, toklist *out, char *err, size_t errlen);

int scn_tokenize(const char *line, toklist *out, char *err, size_t errlen)
{
    if (tokenize(line, out, err, errlen) < 0) {
        toklist_free(out);
        return -1;
    }
    return 0;
}

static int tokenize(const char *line, toklist *out, char *err, size_t errlen)
{
    const char *p = line;
    strbuf cur = {0};
    for (;;) {
        while (is_ws(*p))
            p++;
        if (!*p || *p == '#')
            break;
        cur.n = 0;
        if (cur.s)
            cur.s[0] = '\0';
        if (*p == '"') {
            const char *start = p;
            p++;
            for (;;) {
                if (!*p) {
                    seterr(err, errlen, "unterminated string starting at column %d",
                           (int)(start - line) + 1);
                    sb_free(&cur);
                    return -1;
                }
                if (*p == '"')
                    break;
                if (*p == '\\') {
                    if (p[1] == '"' || p[1] == '\\') {
                        sb_add(&cur, p + 1, 1);
                        p += 2;
                        continue;
                    }
                    seterr(err, errlen, "bad escape '\\%c' in string (only \\\" and \\\\)",
                           p[1] ? p[1] : ' ');
                    sb_free(&cur);
                    return -1;
                }
                sb_add(&cur, p, 1);
                p++;
            }
            p++; /* closing quote */
            if (*p && !is_ws(*p) && *p != '#') {
                seterr(err, errlen, "garbage after closing quote at column %d",
                       (int)(p - line) + 1);
                sb_free(&cur);
                return -1;
            }
            toklist_push(out, TOK_STR, true, cur.s ? cur.s : "", cur.n);
        } else {
            const char *start = p;
            while (*p && !is_ws(*p) && *p != '#') {
                if (*p == '"') {
                    seterr(err, errlen, "unexpected '\"' inside word at column %d",
                           (int)(p - line) + 1);
                    sb_free(&cur);
                    return -1;
                }
                p++;
            }
            char *w = xmemdup0(start, (size_t)(p - start));
            toklist_push(out, classify_bare(w), false, w, strlen(w));
            free(w);
        }
    }
    sb_free(&cur);
    return 0;
}

int scn_unescape_raw(const char *s, char **out, size_t *outlen, char *err, size_t errlen)
{
    strbuf b = {0};
    sb_add(&b, "", 0);
    for (const char *p = s; *p; p++) {
        if (*p != '\\') {
            sb_add(&b, p, 1);
            continue;
        }
        char c;
        switch (p[1]) {
        case 'n':
            c = '\n';
            break;
        case 'r':
            c = '\r';
            break;
        case 't':
            c = '\t';
            break;
        case '0':
            c = '\0';
            break;
        case '\\':
            c = '\\';
            break;
        case 'x': {
            int h = p[2] ? hex_digit(p[2]) : -1;
            int l = (h >= 0 && p[3]) ? hex_digit(p[3]) : -1;
            if (h < 0 || l < 0) {
                seterr(err, errlen, "bad \\x escape (need two hex digits)");
                sb_free(&b);
                return -1;
            }
            c = (char)(h * 16 + l);
            p += 2;
            break;
        }
        default:
            seterr(err, errlen, "bad escape '\\%c' (allowed: \\n \\r \\t \\0 \\\\ \\xHH)",
                   p[1] ? p[1] : ' ');
            sb_free(&b);
            return -1;
        }
        sb_add(&b, &c, 1);
        p++;
    }
    *out = b.s;
    *outlen = b.n;
    return 0;
}

/* ---- protocol tables ------------------------------------------------------ */

typedef struct {
    const char *name;
    const char *params[5];
} proto_entry;

/* The commands and their parameter names in protocol order, from the
 * server's command table (sopra/cmd_table.h, header only: the runner takes
 * the names and nothing of the server's code, and encodes each argument as
 * the scenario writes it, a wrong type included). */
static const proto_entry commands[] = {
#define PARAM(type, key, field, domain, flags) key,
#define COMMAND(id, name, phase, needs, handler, legal, params) {name, {SOPRA_UNPAREN params NULL}},
    SOPRA_COMMANDS(COMMAND)
#undef COMMAND
#undef PARAM
};

/* The events and their parameter names in protocol order, from the
 * server's event table (sopra/event_table.h, header only, like the
 * commands'). */
static const proto_entry events[] = {
#define EPARAM(kind, key, presence) key,
#define EVENT(id, name, params) {name, {SOPRA_EVENT_PARAMS params NULL}},
    SOPRA_EVENTS(EVENT)
#undef EVENT
#undef EPARAM
};

static const char *const *lookup(const proto_entry *tab, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(tab[i].name, name))
            return tab[i].params;
    return NULL;
}

const char *const *scn_event_params(const char *name)
{
    return lookup(events, sizeof events / sizeof events[0], name);
}

const char *const *scn_command_params(const char *name)
{
    return lookup(commands, sizeof commands / sizeof commands[0], name);
}

static size_t nparams(const char *const *p)
{
    size_t n = 0;
    while (p[n])
        n++;
    return n;
}

/* ---- command encoding ----------------------------------------------------- */

static void json_string(strbuf *b, const char *s)
{
    sb_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            sb_add(b, "\\\"", 2);
            break;
        case '\\':
            sb_add(b, "\\\\", 2);
            break;
        case '\n':
            sb_add(b, "\\n", 2);
            break;
        case '\r':
            sb_add(b, "\\r", 2);
            break;
        case '\t':
            sb_add(b, "\\t", 2);
            break;
        default:
            if (*p < 0x20)
                sb_printf(b, "\\u%04x", *p);
            else
                sb_add(b, (const char *)p, 1);
        }
    }
    sb_add(b, "\"", 1);
}

char *scn_encode_command(const char *name, const toklist *args, size_t *outlen, char *err,
                         size_t errlen)
{
    const char *const *params = scn_command_params(name);
    if (!params) {
        seterr(err, errlen, "unknown command '%s' (use '>>' for arbitrary bytes)", name);
        return NULL;
    }
    size_t np = nparams(params);
    if (args->n > np) {
        seterr(err, errlen, "%s takes at most %zu argument%s, got %zu", name, np,
               np == 1 ? "" : "s", args->n);
        return NULL;
    }
    strbuf b = {0};
    sb_puts(&b, "{\"command\":");
    json_string(&b, name);
    for (size_t i = 0; i < args->n; i++) {
        const token *t = &args->v[i];
        sb_add(&b, ",", 1);
        json_string(&b, params[i]);
        sb_add(&b, ":", 1);
        if (!t->quoted && (t->kind == TOK_INT || t->kind == TOK_BOOL)) {
            /* integers verbatim (a leading '+' is not JSON) */
            sb_puts(&b, t->text[0] == '+' ? t->text + 1 : t->text);
        } else {
            json_string(&b, t->text);
        }
    }
    sb_add(&b, "}\n", 2);
    *outlen = b.n;
    return b.s;
}

/* ---- event mapping -------------------------------------------------------- */

static void push_json_value(toklist *out, const cJSON *v, const char *key)
{
    char num[64];
    if (key) {
        /* unexpected field: never equal to a scenario token */
        char *pr = cJSON_PrintUnformatted(v);
        strbuf b = {0};
        sb_printf(&b, "%s=%s", key, pr ? pr : "?");
        toklist_push(out, TOK_OTHER, false, b.s, b.n);
        sb_free(&b);
        cJSON_free(pr);
        return;
    }
    if (cJSON_IsString(v)) {
        toklist_push(out, TOK_STR, false, v->valuestring, strlen(v->valuestring));
    } else if (cJSON_IsBool(v)) {
        const char *s = cJSON_IsTrue(v) ? "true" : "false";
        toklist_push(out, TOK_BOOL, false, s, strlen(s));
    } else if (cJSON_IsNull(v)) {
        toklist_push(out, TOK_NULL, false, "null", 4);
    } else if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d >= -9.2e18 && d <= 9.2e18 && (double)(long long)d == d) {
            snprintf(num, sizeof num, "%lld", (long long)d);
            toklist_push(out, TOK_INT, false, num, strlen(num));
        } else {
            snprintf(num, sizeof num, "%.17g", d);
            toklist_push(out, TOK_OTHER, false, num, strlen(num));
        }
    } else {
        char *pr = cJSON_PrintUnformatted(v);
        toklist_push(out, TOK_OTHER, false, pr ? pr : "?", pr ? strlen(pr) : 1);
        cJSON_free(pr);
    }
}

int scn_event_tokens(const cJSON *obj, const char **name, toklist *out, char *err, size_t errlen)
{
    if (!cJSON_IsObject(obj)) {
        seterr(err, errlen, "not a JSON object");
        return -1;
    }
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(obj, "event");
    if (!cJSON_IsString(ev)) {
        seterr(err, errlen, "no string \"event\" field");
        return -1;
    }
    *name = ev->valuestring;
    const char *const *params = scn_event_params(ev->valuestring);
    if (params) {
        for (size_t i = 0; params[i]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, params[i]);
            if (v)
                push_json_value(out, v, NULL);
        }
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        if (!it->string || !strcmp(it->string, "event"))
            continue;
        bool known = false;
        for (size_t i = 0; params && params[i]; i++)
            if (!strcmp(params[i], it->string))
                known = true;
        if (!known)
            push_json_value(out, it, params ? it->string : NULL);
    }
    return 0;
}

static bool parse_ll(const char *s, long long *v)
{
    errno = 0;
    char *end;
    long long x = strtoll(s, &end, 10);
    if (errno || *end || end == s)
        return false;
    *v = x;
    return true;
}

bool scn_token_equal(const token *a, const token *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == TOK_INT) {
        long long x, y;
        if (parse_ll(a->text, &x) && parse_ll(b->text, &y))
            return x == y;
    }
    return strcmp(a->text, b->text) == 0;
}

bool scn_tokens_equal(const toklist *a, const toklist *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!scn_token_equal(&a->v[i], &b->v[i]))
            return false;
    return true;
}

static void render_token(strbuf *b, const token *t)
{
    if (t->kind != TOK_STR || (!t->quoted && scn_bare_ok(t->text))) {
        sb_puts(b, t->text);
        return;
    }
    sb_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)t->text; *p; p++) {
        if (*p == '"' || *p == '\\') {
            sb_add(b, "\\", 1);
            sb_add(b, (const char *)p, 1);
        } else if (*p == '\n') {
            sb_add(b, "\\n", 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            sb_printf(b, "\\x%02x", *p);
        } else {
            sb_add(b, (const char *)p, 1);
        }
    }
    sb_add(b, "\"", 1);
}

char *scn_render(const char *name, const toklist *t)
{
    strbuf b = {0};
    sb_puts(&b, name);
    for (size_t i = 0; i < t->n; i++) {
        sb_add(&b, " ", 1);
        render_token(&b, &t->v[i]);
    }
    return b.s;
}

static bool json_diff_at(const cJSON *a, const cJSON *b, strbuf *path, char *buf, size_t buflen)
{
    if ((a->type & 0xff) != (b->type & 0xff) || !(cJSON_IsObject(a) || cJSON_IsArray(a))) {
        if (cJSON_Compare(a, b, 1))
            return false;
        char *pa = cJSON_PrintUnformatted(a), *pb = cJSON_PrintUnformatted(b);
        snprintf(buf, buflen, "%s: expected %.80s, got %.80s", path->s, pa ? pa : "?",
                 pb ? pb : "?");
        cJSON_free(pa);
        cJSON_free(pb);
        return true;
    }
    size_t plen = path->n;
    if (cJSON_IsArray(a)) {
        int na = cJSON_GetArraySize(a), nb = cJSON_GetArraySize(b);
        const cJSON *x = a->child, *y = b->child;
        for (int i = 0; x && y; i++, x = x->next, y = y->next) {
            sb_printf(path, "[%d]", i);
            bool d = json_diff_at(x, y, path, buf, buflen);
            path->n = plen;
            path->s[plen] = '\0';
            if (d)
                return true;
        }
        if (na != nb) {
            snprintf(buf, buflen, "%s: expected %d elements, got %d", path->s, na, nb);
            return true;
        }
        return false;
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, a)
    {
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
        if (!y) {
            snprintf(buf, buflen, "%s: key \"%s\" missing", path->s, x->string);
            return true;
        }
        sb_printf(path, ".%s", x->string);
        bool d = json_diff_at(x, y, path, buf, buflen);
        path->n = plen;
        path->s[plen] = '\0';
        if (d)
            return true;
    }
    cJSON_ArrayForEach(x, b)
    {
        if (!cJSON_GetObjectItemCaseSensitive(a, x->string)) {
            snprintf(buf, buflen, "%s: unexpected key \"%s\"", path->s, x->string);
            return true;
        }
    }
    return false;
}

bool scn_json_diff(const cJSON *want, const cJSON *got, char *buf, size_t buflen)
{
    strbuf path = {0};
    sb_puts(&path, "$");
    bool d = json_diff_at(want, got, &path, buf, buflen);
    sb_free(&path);
    if (!d && !cJSON_Compare(want, got, 1)) {
        snprintf(buf, buflen, "values differ");
        d = true;
    }
    return d;
}

/* ---- scenario parsing ----------------------------------------------------- */

void scn_free(scenario *s)
{
    free(s->config_name);
    free(s->config_path);
    free(s->clients);
    free(s->rules);
    for (size_t i = 0; i < s->nsteps; i++) {
        free(s->steps[i].name);
        toklist_free(&s->steps[i].args);
        free(s->steps[i].data);
    }
    free(s->steps);
    memset(s, 0, sizeof *s);
}

static step *add_step(scenario *s, step_kind kind, int line, int client)
{
    if (s->nsteps == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 32;
        s->steps = xrealloc(s->steps, s->cap * sizeof *s->steps);
    }
    step *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    st->line = line;
    st->client = client;
    return st;
}

static void copy_tokens(toklist *dst, const toklist *src, size_t from)
{
    for (size_t i = from; i < src->n; i++)
        toklist_push(dst, src->v[i].kind, src->v[i].quoted, src->v[i].text, strlen(src->v[i].text));
}

static bool has_client(const scenario *s, int c)
{
    for (size_t i = 0; i < s->nclients; i++)
        if (s->clients[i] == c)
            return true;
    return false;
}

/* Parse one non-blank line. Returns 0 or -1 with msg set. */
static int parse_line(scenario *s, const char *line, int lineno, bool *seen_step, char *msg,
                      size_t msglen)
{
    const char *p = line;
    while (is_ws(*p))
        p++;

    /* client steps: "N ..." or "* ..." */
    if ((*p >= '0' && *p <= '9') || *p == '*') {
        int client = -1;
        if (*p == '*') {
            p++;
        } else {
            long v = 0;
            while (*p >= '0' && *p <= '9') {
                v = v * 10 + (*p - '0');
                if (v > 1000000) {
                    seterr(msg, msglen, "client number too large");
                    return -1;
                }
                p++;
            }
            client = (int)v;
        }
        if (!is_ws(*p)) {
            seterr(msg, msglen, "expected whitespace after the client number");
            return -1;
        }
        while (is_ws(*p))
            p++;
        if (!s->have_clients) {
            seterr(msg, msglen, "client step but no 'clients' header");
            return -1;
        }
        if (client >= 0 && !has_client(s, client)) {
            seterr(msg, msglen, "client %d is not listed in 'clients'", client);
            return -1;
        }
        *seen_step = true;
        if (p[0] == '>' && p[1] == '>') {
            if (client < 0) {
                seterr(msg, msglen, "'* >>' is not supported");
                return -1;
            }
            if (p[2] != ' ' || !p[3]) {
                seterr(msg, msglen, "'>>' must be followed by one space and the bytes to send");
                return -1;
            }
            step *st = add_step(s, STEP_RAW, lineno, client);
            return scn_unescape_raw(p + 3, &st->data, &st->len, msg, msglen);
        }
        toklist t = {0};
        if (scn_tokenize(p, &t, msg, msglen) < 0)
            return -1;
        int rc = 0;
        if (t.n == 0) {
            seterr(msg, msglen, "missing '>', '<' or 'closed' after client number");
            rc = -1;
        } else if (!t.v[0].quoted && !strcmp(t.v[0].text, "closed")) {
            if (t.n != 1) {
                seterr(msg, msglen, "'closed' takes no arguments");
                rc = -1;
            } else {
                for (size_t i = 0; i < s->nclients; i++)
                    if (client < 0 || s->clients[i] == client)
                        add_step(s, STEP_CLOSED, lineno, s->clients[i]);
            }
        } else if (!t.v[0].quoted && !strcmp(t.v[0].text, ">")) {
            if (client < 0) {
                seterr(msg, msglen, "'* >' is not supported; send per client");
                rc = -1;
            } else if (t.n < 2 || t.v[1].quoted || t.v[1].kind != TOK_STR) {
                seterr(msg, msglen, "'>' needs a command name");
                rc = -1;
            } else {
                toklist args = {0};
                copy_tokens(&args, &t, 2);
                size_t len = 0;
                char *data = scn_encode_command(t.v[1].text, &args, &len, msg, msglen);
                if (!data) {
                    toklist_free(&args);
                    rc = -1;
                } else {
                    step *st = add_step(s, STEP_SEND, lineno, client);
                    st->name = xstrdup(t.v[1].text);
                    st->args = args;
                    st->data = data;
                    st->len = len;
                }
            }
        } else if (!t.v[0].quoted && !strcmp(t.v[0].text, "<")) {
            if (t.n < 2 || t.v[1].quoted || t.v[1].kind != TOK_STR) {
                seterr(msg, msglen, "'<' needs an event name or '?'");
                rc = -1;
            } else if (!strcmp(t.v[1].text, "?") && t.n > 2) {
                seterr(msg, msglen, "'?' takes no arguments");
                rc = -1;
            } else {
                bool any = !strcmp(t.v[1].text, "?");
                for (size_t i = 0; i < s->nclients; i++) {
                    if (client >= 0 && s->clients[i] != client)
                        continue;
                    step *st = add_step(s, any ? STEP_ANY : STEP_EXPECT, lineno, s->clients[i]);
                    if (!any) {
                        st->name = xstrdup(t.v[1].text);
                        copy_tokens(&st->args, &t, 2);
                    }
                }
            }
        } else {
            seterr(msg, msglen, "expected '>', '>>', '<' or 'closed' after client number, got '%s'",
                   t.v[0].text);
            rc = -1;
        }
        toklist_free(&t);
        return rc;
    }

    toklist t = {0};
    if (scn_tokenize(p, &t, msg, msglen) < 0)
        return -1;
    int rc = 0;
    const char *kw = t.n ? t.v[0].text : "";
    bool header = !strcmp(kw, "config") || !strcmp(kw, "seed") || !strcmp(kw, "clients") ||
                  !strcmp(kw, "rules") || !strcmp(kw, "timeout");
    if (t.n == 0 || t.v[0].quoted) {
        seterr(msg, msglen, "cannot parse line");
        rc = -1;
    } else if (header && *seen_step) {
        seterr(msg, msglen, "header '%s' after the first step", kw);
        rc = -1;
    } else if (!strcmp(kw, "config")) {
        if (t.n != 2 || s->config_name) {
            seterr(msg, msglen,
                   s->config_name ? "duplicate 'config'" : "'config' needs one file name");
            rc = -1;
        } else {
            s->config_name = xstrdup(t.v[1].text);
        }
    } else if (!strcmp(kw, "seed")) {
        long long v;
        if (t.n != 2 || t.v[1].kind != TOK_INT || t.v[1].quoted || !parse_ll(t.v[1].text, &v) ||
            s->have_seed) {
            seterr(msg, msglen, s->have_seed ? "duplicate 'seed'" : "'seed' needs one integer");
            rc = -1;
        } else {
            s->seed = v;
            s->have_seed = true;
        }
    } else if (!strcmp(kw, "timeout")) {
        long long v;
        if (t.n != 2 || t.v[1].kind != TOK_INT || t.v[1].quoted || !parse_ll(t.v[1].text, &v) ||
            v < 0 || v > INT_MAX) {
            seterr(msg, msglen, "'timeout' needs one non-negative integer");
            rc = -1;
        } else {
            s->timeout = (long)v;
        }
    } else if (!strcmp(kw, "rules")) {
        if (t.n != 2 || s->rules) {
            seterr(msg, msglen, s->rules ? "duplicate 'rules'" : "'rules' needs one name");
            rc = -1;
        } else {
            s->rules = xstrdup(t.v[1].text);
        }
    } else if (!strcmp(kw, "clients")) {
        if (s->have_clients || t.n < 2) {
            seterr(msg, msglen,
                   s->have_clients ? "duplicate 'clients'" : "'clients' needs at least one number");
            rc = -1;
        } else {
            if (t.n - 1 > 64) {
                seterr(msg, msglen, "at most 64 clients");
                toklist_free(&t);
                return -1;
            }
            s->clients = xmalloc((t.n - 1) * sizeof *s->clients);
            for (size_t i = 1; i < t.n && rc == 0; i++) {
                long long v;
                if (t.v[i].kind != TOK_INT || t.v[i].quoted || !parse_ll(t.v[i].text, &v) ||
                    v < 0 || v > 1000000) {
                    seterr(msg, msglen, "bad client number '%s'", t.v[i].text);
                    rc = -1;
                } else if (has_client(s, (int)v)) {
                    seterr(msg, msglen, "client %lld listed twice", v);
                    rc = -1;
                } else {
                    s->clients[s->nclients++] = (int)v;
                }
            }
            s->have_clients = true;
        }
    } else if (!strcmp(kw, "exit")) {
        long long v = 0;
        *seen_step = true;
        if (t.n != 2) {
            seterr(msg, msglen, "'exit' needs 0, nonzero or an exit code");
            rc = -1;
        } else if (!strcmp(t.v[1].text, "nonzero")) {
            step *st = add_step(s, STEP_EXIT, lineno, -1);
            st->emode = EXIT_NONZERO;
        } else if (t.v[1].kind == TOK_INT && parse_ll(t.v[1].text, &v) && v >= 0 && v <= 255) {
            step *st = add_step(s, STEP_EXIT, lineno, -1);
            st->emode = EXIT_CODE;
            st->ecode = (int)v;
        } else {
            seterr(msg, msglen, "'exit' needs 0, nonzero or an exit code 0..255");
            rc = -1;
        }
    } else {
        seterr(msg, msglen, "unknown line starting with '%s'", kw);
        rc = -1;
    }
    toklist_free(&t);
    return rc;
}

int scn_parse(const char *text, const char *dir, scenario *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->timeout = 30;
    bool seen_step = false;
    int lineno = 0;
    const char *p = text;
    char msg[SCN_ERRLEN];
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        char *line = xmemdup0(p, len);
        if (len && line[len - 1] == '\r')
            line[len - 1] = '\0';
        p = nl ? nl + 1 : p + len;
        const char *q = line;
        while (is_ws(*q))
            q++;
        if (!*q || *q == '#') {
            free(line);
            continue;
        }
        msg[0] = '\0';
        int rc = parse_line(out, line, lineno, &seen_step, msg, sizeof msg);
        free(line);
        if (rc < 0) {
            seterr(err, errlen, "line %d: %s", lineno, msg);
            scn_free(out);
            return -1;
        }
    }
    if (!out->config_name) {
        seterr(err, errlen, "missing 'config' header");
        scn_free(out);
        return -1;
    }
    if (!out->have_seed) {
        seterr(err, errlen, "missing 'seed' header");
        scn_free(out);
        return -1;
    }
    size_t nexit = 0;
    for (size_t i = 0; i < out->nsteps; i++)
        if (out->steps[i].kind == STEP_EXIT && ++nexit > 1) {
            seterr(err, errlen, "line %d: more than one 'exit' step", out->steps[i].line);
            scn_free(out);
            return -1;
        }
    if (!out->have_clients && nexit == 0) {
        /* invalid-config scenario: implicit "exit nonzero" */
        step *st = add_step(out, STEP_EXIT, lineno, -1);
        st->emode = EXIT_NONZERO;
    }
    if (out->config_name[0] == '/' || !dir || !*dir) {
        out->config_path = xstrdup(out->config_name);
    } else {
        strbuf b = {0};
        sb_printf(&b, "%s/%s", dir, out->config_name);
        out->config_path = b.s;
    }
    return 0;
}

int scn_load(const char *path, scenario *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        seterr(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (strlen(text) != len) {
        seterr(err, errlen, "%s contains a NUL byte", path);
        free(text);
        return -1;
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? xmemdup0(path, (size_t)(slash - path)) : xstrdup(".");
    if (slash && slash == path) {
        free(dir);
        dir = xstrdup("/");
    }
    int rc = scn_parse(text, dir, out, err, errlen);
    free(dir);
    free(text);
    return rc;
}
