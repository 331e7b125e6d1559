/*
 * replay: a recorded game's event lines (replay.h).
 */
#include "replay.h"

#include "toolutil.h" /* hex_digit, read_file */

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int push(struct replay *r, const char *s, size_t len)
{
	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 1024;
		char **nl = realloc(r->lines, (size_t)cap * sizeof *nl);
		if (!nl)
			return -1;
		r->lines = nl;
		r->cap = cap;
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return -1;
	memcpy(copy, s, len);
	copy[len] = '\0';
	r->lines[r->n++] = copy;
	return 0;
}

void replay_free(struct replay *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->lines[i]);
	free(r->lines);
	free(r->name);
	memset(r, 0, sizeof *r);
}

/* sopra-bot's trace writes bytes outside printable ASCII as \xNN (and
 * newlines as \n, which a received line never holds). A JSON text has no
 * \x escape, so a backslash starts either a JSON escape pair (kept) or one
 * of the trace's \xNN (decoded). Decodes in place; returns the length. */
static size_t unescape_trace(char *s, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x' && hex_digit(s[i + 2]) >= 0 &&
		    hex_digit(s[i + 3]) >= 0) {
			s[o++] = (char)(hex_digit(s[i + 2]) * 16 + hex_digit(s[i + 3]));
			i += 3;
		} else if (s[i] == '\\' && i + 1 < len) {
			s[o++] = s[i++];
			s[o++] = s[i];
		} else {
			s[o++] = s[i];
		}
	}
	return o;
}

/* the value after "--opt " in the header line, copied */
static char *header_opt(const char *hdr, size_t hlen, const char *opt)
{
	char *h = strndup(hdr, hlen);
	if (!h)
		return NULL;
	char *p = strstr(h, opt), *val = NULL;
	if (p) {
		p += strlen(opt);
		size_t n = strcspn(p, " \t");
		val = strndup(p, n);
	}
	free(h);
	return val;
}

int replay_parse_botlog(struct replay *r, const char *text)
{
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (len > 12 && strncmp(p, "# sopra-bot ", 12) == 0) {
			char *rules = header_opt(p, len, "--rules ");
			free(r->name);
			r->name = header_opt(p, len, "--name ");
			r->revised = rules && strcmp(rules, "revised") == 0;
			free(rules);
		} else if (len >= 2 && p[0] == '<' && p[1] == ' ') {
			char *line = strndup(p + 2, len - 2);
			if (!line)
				return -1;
			size_t n = unescape_trace(line, len - 2);
			int rc = push(r, line, n);
			free(line);
			if (rc)
				return -1;
		}
		p += len + (eol ? 1 : 0);
	}
	return 0;
}

static bool private_event(const char *line)
{
	return strstr(line, "{\"event\":\"ActNow\"") == line ||
	       strstr(line, "{\"event\":\"Characters\"") == line ||
	       strstr(line, "{\"event\":\"CommandFailed\"") == line ||
	       strstr(line, "{\"event\":\"Config\"") == line;
}

/* sopra-replay's PLAYER<TAB>LINE: an event to all players comes once per
 * player in ascending id, one right after the other; keep the first copy
 * (a copy is the same text to a higher player id than the line before). */
int replay_parse_journal_lines(struct replay *r, const char *text)
{
	bool have_config = false;
	const char *prev = NULL;
	size_t prevlen = 0;
	long prevp = -1;
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		const char *tab = memchr(p, '\t', len);
		if (tab && p[0] != '-') {
			long player = strtol(p, NULL, 10);
			const char *line = tab + 1;
			size_t llen = len - (size_t)(line - p);
			bool is_config = strncmp(line, "{\"event\":\"Config\"", 17) == 0;
			if (is_config && !have_config) {
				have_config = true;
				if (push(r, line, llen))
					return -1;
			} else if (!private_event(line)) {
				bool copy = prev && prevlen == llen &&
				            memcmp(prev, line, llen) == 0 && player > prevp;
				if (!copy && push(r, line, llen))
					return -1;
				prev = line;
				prevlen = llen;
				prevp = player;
			}
		}
		p += len + (eol ? 1 : 0);
	}
	return 0;
}

int replay_parse_ndjson(struct replay *r, const char *text)
{
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (len > 0 && p[0] == '{' && push(r, p, len))
			return -1;
		p += len + (eol ? 1 : 0);
	}
	for (int i = 0; i < r->n; i++)
		if (strncmp(r->lines[i], "{\"event\":\"Moved\"", 16) == 0) {
			r->revised = strstr(r->lines[i], "\"fuel\"") == NULL;
			break;
		}
	return 0;
}

static char *read_all_fd(int fd)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (cap - n < 4096) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		ssize_t got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	if (buf)
		buf[n] = '\0';
	return buf;
}

/* `tool path`'s stdout; NULL on failure */
static char *run_tool(const char *tool, const char *path, int *status)
{
	int pfd[2];
	if (pipe(pfd))
		return NULL;
	pid_t pid = fork();
	if (pid < 0)
		return NULL;
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execlp(tool, tool, path, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	char *out = read_all_fd(pfd[0]);
	close(pfd[0]);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return out;
}

static int load_journal(struct replay *r, const char *path, const char *text, const char *tool)
{
	const char *eol = strchr(text, '\n');
	char *hdr = strndup(text, eol ? (size_t)(eol - text) : strlen(text));
	cJSON *h = hdr ? cJSON_Parse(hdr) : NULL;
	const cJSON *rules = cJSON_GetObjectItemCaseSensitive(h, "rules");
	r->revised = cJSON_IsString(rules) && strcmp(rules->valuestring, "revised") == 0;
	cJSON_Delete(h);
	free(hdr);
	int status = 0;
	char *out = run_tool(tool, path, &status);
	if (!out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(r->err, sizeof r->err, "%s %s failed (exit status %d)", tool, path,
		         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		free(out);
		return -1;
	}
	int rc = replay_parse_journal_lines(r, out);
	free(out);
	return rc;
}

int replay_load(struct replay *r, const char *path, const char *replay_tool)
{
	memset(r, 0, sizeof *r);
	char *text = read_file(path, NULL);
	if (!text) {
		snprintf(r->err, sizeof r->err, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc;
	if (strncmp(text, "{\"journal\"", 10) == 0)
		rc = load_journal(r, path, text, replay_tool);
	else if (strncmp(text, "# sopra-bot", 11) == 0 || strncmp(text, "> ", 2) == 0 ||
	         strncmp(text, "< ", 2) == 0)
		rc = replay_parse_botlog(r, text);
	else
		rc = replay_parse_ndjson(r, text);
	free(text);
	if (rc == 0 && r->n == 0) {
		snprintf(r->err, sizeof r->err, "%s: no events found", path);
		rc = -1;
	} else if (rc && !r->err[0]) {
		snprintf(r->err, sizeof r->err, "%s: out of memory", path);
	}
	return rc;
}

int replay_round_step(const struct replay *r, int from, int dir)
{
	if (dir > 0) {
		for (int i = from; i < r->n; i++)
			if (strncmp(r->lines[i], "{\"event\":\"NextRound\"", 20) == 0)
				return i + 1;
		return r->n;
	}
	for (int i = from - 2; i >= 0; i--)
		if (strncmp(r->lines[i], "{\"event\":\"NextRound\"", 20) == 0)
			return i + 1;
	return 0;
}
