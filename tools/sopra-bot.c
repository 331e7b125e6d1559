/*
 * sopra-bot: a client that registers with a sopra-server, plays random but
 * mostly legal moves until the game ends, and checks what the server says.
 *
 *   sopra-bot --port N [--host H] [--seed S] [--name NAME] [--start]
 *             [--invalid PERCENT] [--leave PERCENT] [--disconnect PERCENT]
 *             [--rules base|revised]
 *             [--quiet] [--max-events N] [--idle SECONDS] [--log FILE]
 *
 * It speaks the NDJSON protocol of ../shared/spec/protocol.md over one plain
 * blocking socket (poll for the idle timer). Every event is parsed and
 * checked against the protocol (known name, exactly the documented
 * parameters with the right types) and against a model of the board that
 * the bot keeps from the events alone (zombies and barricades per entrance,
 * characters and their places, every player's hand, waste, food, morale,
 * children, round numbers). Anything the server must never do is reported
 * as a protocol violation.
 *
 * Decisions come from the bot's own splitmix64 generator seeded by --seed
 * (never the game's): on Characters it selects two of the four offered, on
 * ActNow it sends one plausible command (or, with --invalid, a deliberately
 * bad one: malformed JSON, wrong types, unknown ids, commands not allowed in
 * the phase; plus now and then a command out of turn).
 *
 * stdout: one line "registered NAME" once the Config event arrived (tools
 * such as soak wait for it before starting the next bot); with --lurk
 * "connected NAME" once connected. stderr: the trace
 * (unless --quiet), errors, and finally one summary line:
 *   bot NAME: events=N commands=M failed=K result=R
 * with R one of win, lose (GameEnd), left (Left for us), aborted
 * (RegistrationAborted), closed (the server closed first), disconnected (we
 * hung up, --disconnect), dropped (closed after our over-long line).
 *
 * Exit codes: 0 the game ended (GameEnd, RegistrationAborted, Left, or the
 * server closed the connection); 1 usage or connection error; 2 protocol
 * violation (unparseable line, unknown event, bad parameters, an event after
 * GameEnd / Left, an impossible board); 3 stall (--max-events exceeded or no
 * event for --idle seconds); 4 the server accepted a command that must fail
 * or removed this bot without a reason (e.g. its --timeout fired).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define EXIT_OK 0
#define EXIT_USAGE 1
#define EXIT_PROTOCOL 2
#define EXIT_STALL 3
#define EXIT_SERVER 4

#define MAX_LINE_IN ((size_t)32 << 20) /* longest event line we accept */
#define MAX_PLAYERS 64
#define MAX_EQUIP 16
#define MAX_DICE 64
#define MAX_CMDS_PER_TURN 25
#define MAX_EXPECT 256

/* ---- small helpers -------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static int rnd(uint64_t *s, int n)
{
	return n <= 0 ? 0 : (int)(splitmix64(s) % (uint64_t)n);
}

/* true with probability pct percent */
static bool chance(uint64_t *s, double pct)
{
	if (pct <= 0)
		return false;
	return (double)(splitmix64(s) >> 11) / 9007199254740992.0 * 100.0 < pct;
}

static double now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p) {
		fputs("sopra-bot: out of memory\n", stderr);
		exit(EXIT_USAGE);
	}
	return p;
}

/* ---- the model ------------------------------------------------------------ */

enum ctype {
	CT_FOOD,
	CT_FUEL,
	CT_STUFF,
	CT_MEDICINE,
	CT_LOCK,
	CT_SCISSORS,
	CT_HAMMER,
	CT_SNOW_BOOTS,
	CT_COLT,
	CT_SWAB,
	CT_BLUEPRINT,
	CT_COUNT
};
static const char *const ctype_names[CT_COUNT] = { "food",     "fuel",   "stuff",      "medicine",
						   "lock",     "scissors", "hammer",   "snow_boots",
						   "colt",     "swab",   "blueprint" };

static bool is_equipment(enum ctype t)
{
	return t >= CT_HAMMER;
}

enum abtype { AB_WOUND, AB_NO_INFECTION, AB_SEARCH, AB_TRASH, AB_HEAL, AB_FEED, AB_BARRICADE, AB_KILL, AB_COUNT };
static const char *const ab_names[AB_COUNT] = { "wound", "no_infection", "search",    "trash",
						"heal",  "feed",         "barricade", "kill" };

struct card {
	int id;
	enum ctype type;
	int deck;   /* location index whose pile holds it (colony: start cards), -1 none */
	bool drawn; /* has left its pile */
	int holder; /* player holding it, -1 none */
	int amount; /* food */
	int bp_loc; /* blueprint: location index */
};

struct chr {
	int id;
	int status, attack, search;
	enum abtype ab;
	int ab_loc; /* SEARCH / KILL: location index (-1 unknown) */
	int ab_num, ab_max, ab_die;
	bool ab_children;
	bool spawned, alive, moved;
	int owner, loc; /* loc: location index, -1 when not on the board */
	int wounds, frost;
	int uses; /* activations this round */
	int equip[MAX_EQUIP]; /* card indices, in the order equipped */
	bool equip_spent[MAX_EQUIP];
	int nequip;
};

struct loc {
	int id;
	bool colony;
	int entrances, spaces;
	int *z, *bar;
	int deck_left;
};

struct bot {
	/* options */
	const char *host, *name, *log_path;
	int port;
	uint64_t seed;
	bool start, quiet, revised;
	double invalid_pct, leave_pct, disconnect_pct, stall_pct;
	bool lurk;
	long max_events;
	double idle_sec;

	int fd;
	FILE *log;
	uint64_t rng, rng_oot, rng_net;
	char *rbuf;
	size_t rlen, rcap;

	long events, commands, failed;
	const char *result; /* NULL while playing */
	bool got_config, game_started;
	bool conn_broken;
	bool quit;                /* we hung up: stop reading */
	bool overlong_sent;       /* we sent an over-long line: expect CommandFailed, then EOF */
	bool overlong_answered;
	bool stalled;  /* --stall: we stopped answering, the server's --timeout must remove us */
	bool oot_leave; /* we sent Leave out of turn: it may have been judged in our turn */

	/* config */
	cJSON *cfg_json;
	int max_players;
	struct card *cards;
	int ncards;
	struct chr *chrs;
	int nchrs;
	struct loc *locs;
	int nlocs, colony;
	int *crisis_ids, *crisis_required, *crisis_moral;
	enum ctype *crisis_types;
	int ncrises;
	int goal_rounds, goal_moral;
	enum { GOAL_SURVIVE, GOAL_BARRICADES, GOAL_ZOMBIES } goal_type;
	int goal_value;
	int *zorder; /* location indices: the colony, then ascending id */

	/* Events the server must send next, in order (deaths, card effects,
	 * round start, the selection's spawns): checked before anything else. */
	struct expect {
		enum { EXP_EXACT, EXP_RESPAWN } kind;
		const char *name;
		int nargs;    /* arguments compared */
		int a[3];
		bool any_gt;  /* argument nargs (the next one) must be > a[nargs] */
	} exq[MAX_EXPECT];
	int nexq;
	/* the colony phase, step by step (behaviour.md 8) */
	enum { CP_OFF, CP_FOOD, CP_STARV, CP_WASTE, CP_CRISIS, CP_ZOMBIES, CP_GOAL } cp;
	int cp_need, tokens;
	int zi, zk, zn;
	/* a search in progress: the cards it must draw */
	int search_k, search_char, search_bp;
	bool search_ab;

	/* state */
	int me, nplayers;
	char *player_names[MAX_PLAYERS];
	bool player_in[MAX_PLAYERS];
	int dice[MAX_DICE], ndice;
	int crisis; /* index, -1 none */
	int contributed; /* to the current crisis */
	int waste, food, moral, children;
	int round, nrounds_seen;
	int searched_loc; /* location index of the last Searched while its cards follow, else -1 */
	int search_draws;
	bool expect_waste_inc; /* the next event must be WasteChanged(+1) */
	bool expect_game_lost; /* morale <= 0: the next event must be GameEnd(false) */
	bool cleaned_this_round;
	bool selecting; /* Characters received, selection not yet confirmed */
	int offered[4];
	int cmds_this_turn;
	bool my_turn; /* ActNow seen, turn not ended by us yet */
	bool sent_leave;
	/* the last in-turn command, to charge dice when it succeeds */
	enum { PD_NONE, PD_SEARCH, PD_ATTACK, PD_BARRICADE, PD_CLEAN, PD_KILL } pend;
	int pend_char;
	/* strict check: the next event to us must be CommandFailed */
	bool expect_fail;
	char expect_fail_what[160];
	int oot_pending; /* out-of-turn commands whose CommandFailed has not come yet */
	bool act_after_fail; /* our bad input in turn: act again on its CommandFailed */
	/* Out-of-turn lines are bad input (CommandFailed, nothing else, even if
	 * one is judged in our turn) unless this bot also sends well-formed
	 * commands out of turn: one of those judged in our turn gets its own
	 * ActNow, which we cannot tell from a real one, so two of our commands
	 * can be in flight from then on and the strict checks are off. */
	bool oot_commands, strict_off;
};

static struct bot B;

/* ---- reporting ------------------------------------------------------------ */

static void summary(void)
{
	fprintf(stderr, "bot %s: events=%ld commands=%ld failed=%ld result=%s\n", B.name, B.events,
		B.commands, B.failed, B.result ? B.result : "closed");
	fflush(stderr);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3), noreturn))
#endif
static void
die(int code, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "bot %s: %s: %s\n", B.name,
		code == EXIT_PROTOCOL  ? "protocol violation"
		: code == EXIT_STALL   ? "stall"
		: code == EXIT_SERVER  ? "server misbehaved"
					: "error",
		msg);
	if (B.log) {
		fprintf(B.log, "! %s\n", msg);
		fflush(B.log);
	}
	if (code == EXIT_PROTOCOL || code == EXIT_SERVER)
		B.result = "error";
	else if (code == EXIT_STALL)
		B.result = "stalled";
	summary();
	exit(code);
}

#define VIOLATION(...) die(EXIT_PROTOCOL, __VA_ARGS__)

static void trace(char dir, const char *line, size_t len)
{
	if (B.log) {
		fprintf(B.log, "%c ", dir);
		for (size_t i = 0; i < len; i++) {
			unsigned char ch = (unsigned char)line[i];
			if (ch == '\n')
				fputs("\\n", B.log);
			else if (ch == '\r')
				fputs("\\r", B.log);
			else if (ch < 0x20 || ch >= 0x7f)
				fprintf(B.log, "\\x%02x", ch);
			else
				fputc(ch, B.log);
		}
		fputc('\n', B.log);
	}
	if (!B.quiet) {
		int shown = len > 300 ? 300 : (int)len;
		while (shown > 0 && (line[shown - 1] == '\n' || line[shown - 1] == '\r'))
			shown--;
		fprintf(stderr, "[%s] %c %.*s%s\n", B.name, dir, shown, line, len > 300 ? "..." : "");
	}
}

/* ---- lookups -------------------------------------------------------------- */

static int find_card(int id)
{
	for (int i = 0; i < B.ncards; i++)
		if (B.cards[i].id == id)
			return i;
	return -1;
}

static int find_chr(int id)
{
	for (int i = 0; i < B.nchrs; i++)
		if (B.chrs[i].id == id)
			return i;
	return -1;
}

static int find_loc(int id)
{
	for (int i = 0; i < B.nlocs; i++)
		if (B.locs[i].id == id)
			return i;
	return -1;
}

static int chars_at(int l)
{
	int n = 0;
	for (int i = 0; i < B.nchrs; i++)
		if (B.chrs[i].alive && B.chrs[i].loc == l)
			n++;
	return n;
}

static bool has_room(int l)
{
	return B.locs[l].colony || chars_at(l) < B.locs[l].spaces;
}

static int living_of(int p)
{
	int n = 0;
	for (int i = 0; i < B.nchrs; i++)
		if (B.chrs[i].alive && B.chrs[i].owner == p)
			n++;
	return n;
}

static int max_die(void)
{
	int m = 0;
	for (int i = 0; i < B.ndice; i++)
		if (B.dice[i] > m)
			m = B.dice[i];
	return m;
}

/* remove the smallest die >= v (v = 1: the lowest die) */
static void use_die(int v)
{
	int best = -1;
	for (int i = 0; i < B.ndice; i++)
		if (B.dice[i] >= v && (best < 0 || B.dice[i] < B.dice[best]))
			best = i;
	if (best >= 0)
		B.dice[best] = B.dice[--B.ndice];
}

/* the most recently equipped unspent item of type t on character c */
static int unspent_equip(const struct chr *c, enum ctype t)
{
	for (int i = c->nequip - 1; i >= 0; i--)
		if (B.cards[c->equip[i]].type == t && !c->equip_spent[i])
			return i;
	return -1;
}

/* ---- configuration ----------------------------------------------------------- */

static int jint(const cJSON *o, const char *key, int def)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(it) ? it->valueint : def;
}

/* the single key of a polymorphic entry and its value */
static const cJSON *poly(const cJSON *entry, const char **key)
{
	if (!cJSON_IsObject(entry) || !entry->child)
		return NULL;
	*key = entry->child->string;
	return entry->child;
}

static void load_config(const char *text)
{
	cJSON *root = cJSON_Parse(text);
	if (!cJSON_IsObject(root))
		VIOLATION("the Config event's text is not a JSON object");
	B.cfg_json = root;
	B.max_players = jint(root, "maxPlayers", 0);

	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "cards");
	B.ncards = cJSON_GetArraySize(arr);
	B.cards = xcalloc((size_t)B.ncards, sizeof *B.cards);
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, arr)
	{
		const char *k = "";
		const cJSON *v = poly(e, &k);
		struct card *c = &B.cards[i++];
		c->id = v ? jint(v, "identifier", -1) : -1;
		c->type = CT_STUFF;
		for (int t = 0; t < CT_COUNT; t++)
			if (strcmp(k, ctype_names[t]) == 0)
				c->type = (enum ctype)t;
		c->deck = -1;
		c->holder = -1;
		c->amount = v ? jint(v, "amount", 0) : 0;
		c->bp_loc = v ? jint(v, "location", -1) : -1; /* an id until the locations are read */
	}

	arr = cJSON_GetObjectItemCaseSensitive(root, "locations");
	B.nlocs = cJSON_GetArraySize(arr);
	B.locs = xcalloc((size_t)B.nlocs, sizeof *B.locs);
	B.colony = -1;
	i = 0;
	cJSON_ArrayForEach(e, arr)
	{
		struct loc *l = &B.locs[i];
		const cJSON *body = e;
		const cJSON *col = cJSON_GetObjectItemCaseSensitive(e, "colony");
		if (col) {
			body = col;
			l->colony = true;
			B.colony = i;
		}
		l->id = jint(body, "identifier", -1);
		l->entrances = jint(body, "entrances", 1);
		if (l->entrances < 1)
			l->entrances = 1;
		l->spaces = jint(body, "survivorSpaces", 0);
		l->z = xcalloc((size_t)l->entrances, sizeof(int));
		l->bar = xcalloc((size_t)l->entrances, sizeof(int));
		const cJSON *cl = cJSON_GetObjectItemCaseSensitive(body, col ? "startCards" : "cards");
		const cJSON *ce;
		cJSON_ArrayForEach(ce, cl)
		{
			int ci = cJSON_IsNumber(ce) ? find_card(ce->valueint) : -1;
			if (ci >= 0) {
				B.cards[ci].deck = i;
				if (!col)
					l->deck_left++;
			}
		}
		i++;
	}
	if (B.colony < 0)
		VIOLATION("the Config has no colony");
	for (int k = 0; k < B.ncards; k++)
		if (B.cards[k].type == CT_BLUEPRINT)
			B.cards[k].bp_loc = find_loc(B.cards[k].bp_loc);
	/* zombie order of the colony phase: the colony, then ascending id */
	B.zorder = xcalloc((size_t)B.nlocs, sizeof(int));
	B.zorder[0] = B.colony;
	for (int l = 0, n = 1; l < B.nlocs; l++) {
		if (l == B.colony)
			continue;
		int j = n++;
		while (j > 1 && B.locs[B.zorder[j - 1]].id > B.locs[l].id) {
			B.zorder[j] = B.zorder[j - 1];
			j--;
		}
		B.zorder[j] = l;
	}

	arr = cJSON_GetObjectItemCaseSensitive(root, "characters");
	B.nchrs = cJSON_GetArraySize(arr);
	B.chrs = xcalloc((size_t)B.nchrs, sizeof *B.chrs);
	i = 0;
	cJSON_ArrayForEach(e, arr)
	{
		struct chr *c = &B.chrs[i++];
		c->id = jint(e, "identifier", -1);
		c->status = jint(e, "status", 0);
		c->attack = jint(e, "attack", 6);
		c->search = jint(e, "search", 6);
		c->owner = -1;
		c->loc = -1;
		c->ab_loc = -1;
		const char *k = "";
		const cJSON *v = poly(cJSON_GetObjectItemCaseSensitive(e, "ability"), &k);
		c->ab = AB_WOUND;
		for (int t = 0; t < AB_COUNT; t++)
			if (strcmp(k, ab_names[t]) == 0)
				c->ab = (enum abtype)t;
		if (v) {
			if (c->ab == AB_SEARCH)
				c->ab_loc = find_loc(jint(v, "location", -1));
			if (c->ab == AB_KILL)
				c->ab_loc = find_loc(jint(v, "locationId", -1));
			c->ab_num = jint(v, c->ab == AB_FEED	       ? "numFood"
					    : c->ab == AB_BARRICADE ? "numBarricades"
					    : c->ab == AB_KILL      ? "numZombies"
								    : "numCards",
					 0);
			c->ab_max = jint(v, "maxActivations", 1);
			c->ab_die = jint(v, "dieValue", 1);
			const cJSON *ch = cJSON_GetObjectItemCaseSensitive(v, "children");
			c->ab_children = cJSON_IsTrue(ch);
		}
	}

	arr = cJSON_GetObjectItemCaseSensitive(root, "crises");
	B.ncrises = cJSON_GetArraySize(arr);
	B.crisis_ids = xcalloc((size_t)B.ncrises, sizeof(int));
	B.crisis_types = xcalloc((size_t)B.ncrises, sizeof(enum ctype));
	B.crisis_required = xcalloc((size_t)B.ncrises, sizeof(int));
	B.crisis_moral = xcalloc((size_t)B.ncrises, sizeof(int));
	i = 0;
	cJSON_ArrayForEach(e, arr)
	{
		const char *k = "";
		const cJSON *v = poly(e, &k);
		B.crisis_ids[i] = v ? jint(v, "identifier", -1) : -1;
		B.crisis_required[i] = v ? jint(v, "requiredCards", 1) : 1;
		B.crisis_moral[i] = v ? jint(v, "moralChange", 1) : 1;
		B.crisis_types[i] = strcmp(k, "food") == 0	 ? CT_FOOD
				    : strcmp(k, "fuel") == 0	 ? CT_FUEL
				    : strcmp(k, "medicine") == 0 ? CT_MEDICINE
								 : CT_STUFF;
		i++;
	}

	const cJSON *goal = cJSON_GetObjectItemCaseSensitive(root, "goal");
	B.goal_rounds = jint(goal, "rounds", 1);
	B.goal_moral = jint(goal, "moral", 1);
	B.goal_type = cJSON_GetObjectItemCaseSensitive(goal, "barricades")	     ? GOAL_BARRICADES
		      : cJSON_GetObjectItemCaseSensitive(goal, "locationWithZombies") ? GOAL_ZOMBIES
										       : GOAL_SURVIVE;
	B.goal_value = jint(goal, B.goal_type == GOAL_BARRICADES ? "barricades" : "locationWithZombies", 0);
	B.moral = B.goal_moral;
	B.children = jint(goal, "childrenInColony", 0);
	/* the initial board (behaviour.md 3.5), announced by no event */
	for (int l = 0; l < B.nlocs; l++) {
		int n = jint(goal, B.locs[l].colony ? "zombiesColony" : "zombiesLocations", 0);
		for (int z = 0; z < n; z++)
			B.locs[l].z[z % B.locs[l].entrances]++;
	}
	B.crisis = -1;
	B.searched_loc = -1;
}

/* ---- sending ------------------------------------------------------------------ */

static void send_raw(const char *data, size_t len)
{
	trace('>', data, len);
	B.commands++;
	if (B.conn_broken)
		return;
	/* now and then in two writes: the server must frame by "\n" only */
	size_t cut = len > 2 && rnd(&B.rng_net, 10) == 0 ? 1 + (size_t)rnd(&B.rng_net, (int)(len - 1)) : len;
	size_t off = 0;
	while (off < len) {
		size_t upto = off < cut ? cut : len;
		ssize_t n = send(B.fd, data + off, upto - off, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* the server closed on us; reading will tell the rest */
			B.conn_broken = true;
			return;
		}
		off += (size_t)n;
	}
}

static void send_str(const char *s)
{
	send_raw(s, strlen(s));
}

/* Send one JSON object built from fmt; sometimes with an extra unknown field
 * or a CRLF ending (both must be accepted). */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void
sendf(const char *fmt, ...)
{
	char body[1024], line[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(body, sizeof body, fmt, ap);
	va_end(ap);
	size_t n = strlen(body);
	int variant = rnd(&B.rng_oot, 20);
	if (variant == 0 && n > 2 && body[n - 1] == '}') {
		body[n - 1] = '\0';
		snprintf(line, sizeof line, "%s,\"botNote\":{\"x\":[1,2.5,null]}}\n", body);
	} else if (variant == 1) {
		snprintf(line, sizeof line, "%s\r\n", body);
	} else if (variant == 2) {
		snprintf(line, sizeof line, "  %s \t\n", body);
	} else {
		snprintf(line, sizeof line, "%s\n", body);
	}
	send_raw(line, strlen(line));
}

/* ---- decisions ------------------------------------------------------------------ */

struct cand {
	double w;
	char cmd[256];
	int pend, pend_char;
};

#define MAX_CANDS 512
static struct cand cands[MAX_CANDS];
static int ncands;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void
cand(double w, int pend, int pend_char, const char *fmt, ...)
{
	if (ncands >= MAX_CANDS)
		return;
	struct cand *c = &cands[ncands++];
	c->w = w;
	c->pend = pend;
	c->pend_char = pend_char;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->cmd, sizeof c->cmd, fmt, ap);
	va_end(ap);
}

/* a random entrance of location l passing the filter: 0 zombie, 1 space */
static int pick_entrance(int l, int want)
{
	int opts[256], n = 0;
	for (int e = 0; e < B.locs[l].entrances && n < 256; e++) {
		int z = B.locs[l].z[e], b = B.locs[l].bar[e];
		if ((want == 0 && z > 0) || (want == 1 && z + b < 3))
			opts[n++] = e;
	}
	return n ? opts[rnd(&B.rng, n)] : -1;
}

static int pick_other_location(int from)
{
	int opts[256], n = 0;
	for (int l = 0; l < B.nlocs && n < 256; l++)
		if (l != from && has_room(l))
			opts[n++] = l;
	return n ? opts[rnd(&B.rng, n)] : -1;
}

/* a living character at location l, preferring injured ones when injured */
static int pick_char_at(int l, bool injured)
{
	int opts[256], n = 0;
	for (int i = 0; i < B.nchrs && n < 256; i++) {
		const struct chr *c = &B.chrs[i];
		if (c->alive && c->loc == l && (!injured || c->wounds + c->frost > 0))
			opts[n++] = i;
	}
	return n ? opts[rnd(&B.rng, n)] : -1;
}

static bool crisis_accepts(enum ctype t)
{
	if (B.crisis < 0)
		return false;
	enum ctype want = B.crisis_types[B.crisis];
	if (want == CT_STUFF)
		return t == CT_STUFF || t == CT_LOCK || t == CT_SCISSORS || is_equipment(t);
	return t == want;
}

static bool holds_type(enum ctype t)
{
	for (int i = 0; i < B.ncards; i++)
		if (B.cards[i].holder == B.me && B.cards[i].type == t)
			return true;
	return false;
}

/* food the colony will eat in the next colony phase */
static int food_need(void)
{
	return (B.children + chars_at(B.colony) + 1) / 2;
}

static void build_candidates(void)
{
	ncands = 0;
	int md = max_die();
	bool hungry = B.food < food_need();
	bool crisis_open = B.crisis >= 0 && B.contributed < B.crisis_required[B.crisis] + 2;
	for (int i = 0; i < B.nchrs; i++) {
		struct chr *c = &B.chrs[i];
		if (!c->alive || c->owner != B.me)
			continue;
		int l = c->loc;
		struct loc *L = &B.locs[l];
		if (!c->moved) {
			int to = pick_other_location(l);
			if (to >= 0) {
				if (!B.revised && holds_type(CT_FUEL) && rnd(&B.rng, 3) == 0)
					cand(2, PD_NONE, -1,
					     "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d,\"fuel\":true}",
					     c->id, B.locs[to].id);
				else if (!B.revised && rnd(&B.rng, 2))
					cand(2, PD_NONE, -1,
					     "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d,\"fuel\":false}",
					     c->id, B.locs[to].id);
				else
					cand(2, PD_NONE, -1,
					     "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d}", c->id,
					     B.locs[to].id);
			}
		}
		if (!L->colony && L->deck_left > 0 && md >= c->search)
			cand(4, PD_SEARCH, i, "{\"command\":\"Search\",\"characterId\":%d}", c->id);
		if (md >= c->attack) {
			int e = pick_entrance(l, 0);
			if (e >= 0)
				cand(4, PD_ATTACK, i,
				     "{\"command\":\"Attack\",\"characterId\":%d,\"entrance\":%d}", c->id, e);
		}
		if (B.ndice > 0 || (B.revised && unspent_equip(c, CT_HAMMER) >= 0)) {
			int e = pick_entrance(l, 1);
			if (e >= 0)
				cand(1.5, PD_BARRICADE, i,
				     "{\"command\":\"Barricade\",\"characterId\":%d,\"entrance\":%d}", c->id, e);
		}
		if (L->colony && B.waste > 0 && B.ndice > 0 && (B.revised || !B.cleaned_this_round))
			cand(B.waste >= 8 ? 5 : 1, PD_CLEAN, i, "{\"command\":\"CleanWaste\",\"characterId\":%d}", c->id);
		switch (c->ab) {
		case AB_FEED:
			if (c->uses == 0)
				cand(6, PD_NONE, -1, "{\"command\":\"UseAbility\",\"characterId\":%d}", c->id);
			break;
		case AB_HEAL:
			if (c->uses == 0) {
				int t = pick_char_at(l, true);
				if (t >= 0)
					cand(3, PD_NONE, -1,
					     "{\"command\":\"UseAbility\",\"characterId\":%d,\"target\":%d}", c->id,
					     B.chrs[t].id);
			}
			break;
		case AB_BARRICADE:
			if (c->uses < c->ab_max) {
				int e = pick_entrance(l, 1);
				if (e >= 0)
					cand(2, PD_NONE, -1,
					     "{\"command\":\"UseAbility\",\"characterId\":%d,\"target\":%d}", c->id, e);
			}
			break;
		case AB_KILL:
			if (c->uses < c->ab_max && l == c->ab_loc && md >= c->ab_die &&
			    (!c->ab_children || B.children > 0)) {
				int e = pick_entrance(l, 0);
				if (e >= 0)
					cand(4, PD_KILL, i,
					     "{\"command\":\"UseAbility\",\"characterId\":%d,\"target\":%d}", c->id, e);
			}
			break;
		default:
			break;
		}
	}

	/* cards in hand, played through one of our characters where needed */
	int mine[64], nmine = 0;
	for (int i = 0; i < B.nchrs && nmine < 64; i++)
		if (B.chrs[i].alive && B.chrs[i].owner == B.me)
			mine[nmine++] = i;
	for (int k = 0; k < B.ncards; k++) {
		struct card *cd = &B.cards[k];
		if (cd->holder != B.me)
			continue;
		if (crisis_accepts(cd->type) && !(cd->type == CT_FOOD && hungry))
			cand(crisis_open ? 5 : 0.3, PD_NONE, -1, "{\"command\":\"ContributeCard\",\"cardId\":%d}",
			     cd->id);
		if (nmine == 0)
			continue;
		struct chr *c = &B.chrs[mine[rnd(&B.rng, nmine)]];
		int l = c->loc;
		switch (cd->type) {
		case CT_FOOD:
			cand(hungry ? 8 : 0.5, PD_NONE, -1, "{\"command\":\"UseCard\",\"cardId\":%d}", cd->id);
			break;
		case CT_STUFF:
			if (B.ndice > 0)
				cand(0.7, PD_NONE, -1, "{\"command\":\"UseCard\",\"cardId\":%d}", cd->id);
			break;
		case CT_MEDICINE: {
			int t = pick_char_at(l, true);
			if (t >= 0)
				cand(2, PD_NONE, -1,
				     "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":%d}",
				     cd->id, c->id, B.chrs[t].id);
			break;
		}
		case CT_LOCK: {
			int e = pick_entrance(l, 1);
			if (e >= 0)
				cand(1, PD_NONE, -1,
				     "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":%d}",
				     cd->id, c->id, e);
			break;
		}
		case CT_SCISSORS: {
			int e = pick_entrance(l, 0);
			if (e >= 0)
				cand(2, PD_NONE, -1,
				     "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":%d}",
				     cd->id, c->id, e);
			break;
		}
		case CT_FUEL:
			if (B.revised && !c->moved) {
				int to = pick_other_location(l);
				if (to >= 0)
					cand(1.5, PD_NONE, -1,
					     "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":%d}",
					     cd->id, c->id, B.locs[to].id);
			}
			break;
		default: /* equipment */
			if (B.revised) {
				int t = pick_char_at(l, false);
				if (t >= 0)
					cand(1.5, PD_NONE, -1,
					     "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":%d}",
					     cd->id, c->id, B.chrs[t].id);
			}
			break;
		}
	}
}

/* A plausible command with random arguments: may well fail. */
static void chaos_command(void)
{
	int ci = rnd(&B.rng, B.nchrs);
	int cid = B.chrs[ci].id;
	int li = rnd(&B.rng, B.nlocs);
	int e = rnd(&B.rng, B.locs[li].entrances + 1);
	int card = B.cards[rnd(&B.rng, B.ncards)].id;
	switch (rnd(&B.rng, 9)) {
	case 0:
		sendf("{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d}", cid, B.locs[li].id);
		break;
	case 1:
		sendf("{\"command\":\"Search\",\"characterId\":%d}", cid);
		break;
	case 2:
		sendf("{\"command\":\"Attack\",\"characterId\":%d,\"entrance\":%d}", cid, e);
		break;
	case 3:
		sendf("{\"command\":\"Barricade\",\"characterId\":%d,\"entrance\":%d}", cid, e);
		break;
	case 4:
		sendf("{\"command\":\"CleanWaste\",\"characterId\":%d}", cid);
		break;
	case 5:
		sendf("{\"command\":\"ContributeCard\",\"cardId\":%d}", card);
		break;
	case 6:
		sendf("{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d,\"target\":%d}", card, cid,
		      rnd(&B.rng, 2) ? e : B.chrs[rnd(&B.rng, B.nchrs)].id);
		break;
	case 7:
		sendf("{\"command\":\"UseAbility\",\"characterId\":%d,\"target\":%d}", cid, e);
		break;
	default:
		sendf("{\"command\":\"UseAbility\",\"characterId\":%d}", cid);
		break;
	}
}

static int unknown_char_id(void)
{
	int m = 0;
	for (int i = 0; i < B.nchrs; i++)
		if (B.chrs[i].id > m)
			m = B.chrs[i].id;
	return m + 1000 + rnd(&B.rng_oot, 1000);
}

static int unknown_card_id(void)
{
	int m = 0;
	for (int i = 0; i < B.ncards; i++)
		if (B.cards[i].id > m)
			m = B.cards[i].id;
	return m + 1000 + rnd(&B.rng_oot, 1000);
}

static int my_char_index(uint64_t *r)
{
	int opts[64], n = 0;
	for (int i = 0; i < B.nchrs && n < 64; i++)
		if (B.chrs[i].alive && B.chrs[i].owner == B.me)
			opts[n++] = i;
	return n ? opts[rnd(r, n)] : -1;
}

/* How the server answers an invalid line (protocol.md, behaviour.md and the
 * project's systemtests/scenarios/h_bytes.scn): */
enum inv_kind {
	INV_BAD,     /* does not decode into a command: CommandFailed, nothing else */
	INV_DECODED, /* a command that fails its checks: CommandFailed (+ ActNow in turn) */
	INV_BLANK,   /* empty / blank line: no answer at all */
};

/*
 * One line that must fail whatever the state: bad framing or JSON, bad
 * types, unknown ids, someone else's character, a card we do not hold, a
 * command of another phase (only lines that do not decode when bad_only).
 * Uses generator r. Returns a description and stores how the server answers
 * it in *kind.
 */
static const char *send_invalid(uint64_t *r, enum inv_kind *kind, bool bad_only)
{
	static const int bad_cases[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 18, 19, 20, 21 };
	*kind = INV_BAD;
	char buf[512];
	int mc = my_char_index(r);
	int myid = mc >= 0 ? B.chrs[mc].id : unknown_char_id();
	int which = bad_only ? bad_cases[rnd(r, (int)(sizeof bad_cases / sizeof bad_cases[0]))] : rnd(r, 23);
	switch (which) {
	case 0:
		send_str("{\"command\":\"Move\",\"characterId\":\n");
		return "truncated JSON";
	case 1:
		send_str("[1,2,3]\n");
		return "a JSON array";
	case 2:
		send_str("\"EndTurn\"\n");
		return "a JSON string";
	case 3:
		send_str("{}\n");
		return "an object without command";
	case 4:
		send_str("{\"command\":\"Dance\",\"characterId\":1}\n");
		return "an unknown command";
	case 5:
		send_str("{\"command\":42}\n");
		return "a numeric command name";
	case 6:
		send_str("{\"command\":\"Search\"}\n");
		return "a missing parameter";
	case 7:
		snprintf(buf, sizeof buf, "{\"command\":\"Attack\",\"characterId\":\"%d\",\"entrance\":0}\n", myid);
		send_raw(buf, strlen(buf));
		return "a string id";
	case 8:
		snprintf(buf, sizeof buf, "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d.5}\n", myid,
			 B.locs[rnd(r, B.nlocs)].id);
		send_raw(buf, strlen(buf));
		return "a fractional id";
	case 9:
		snprintf(buf, sizeof buf, "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":1e300}\n", myid);
		send_raw(buf, strlen(buf));
		return "an id out of range";
	case 10:
		snprintf(buf, sizeof buf, "{\"command\":\"UseCard\",\"cardId\":%d,\"characterId\":%d}\n",
			 B.cards[rnd(r, B.ncards)].id, myid);
		send_raw(buf, strlen(buf));
		return "characterId without target";
	case 11:
		snprintf(buf, sizeof buf, "{\"command\":\"Search\",\"characterId\":%d}\n", unknown_char_id());
		send_raw(buf, strlen(buf));
		*kind = INV_DECODED;
		return "an unknown character";
	case 12: {
		/* someone else's or an unspawned character */
		int opts[256], n = 0;
		for (int i = 0; i < B.nchrs && n < 256; i++)
			if (!(B.chrs[i].alive && B.chrs[i].owner == B.me))
				opts[n++] = i;
		int ci = n ? opts[rnd(r, n)] : -1;
		int cid = ci >= 0 ? B.chrs[ci].id : unknown_char_id();
		snprintf(buf, sizeof buf, "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d}\n", cid,
			 B.locs[rnd(r, B.nlocs)].id);
		send_raw(buf, strlen(buf));
		*kind = INV_DECODED;
		return "a character we do not own";
	}
	case 13: {
		int m = 0;
		for (int i = 0; i < B.nlocs; i++)
			if (B.locs[i].id > m)
				m = B.locs[i].id;
		snprintf(buf, sizeof buf, "{\"command\":\"Move\",\"characterId\":%d,\"locationId\":%d}\n", myid,
			 m + 1 + rnd(r, 100));
		send_raw(buf, strlen(buf));
		*kind = INV_DECODED;
		return "an unknown location";
	}
	case 14: {
		int e = rnd(r, 2) ? -1 - rnd(r, 5) : (mc >= 0 ? B.locs[B.chrs[mc].loc].entrances : 50) + rnd(r, 5);
		snprintf(buf, sizeof buf, "{\"command\":\"%s\",\"characterId\":%d,\"entrance\":%d}\n",
			 rnd(r, 2) ? "Attack" : "Barricade", myid, e);
		send_raw(buf, strlen(buf));
		*kind = INV_DECODED;
		return "an entrance out of range";
	}
	case 15: {
		int opts[1024], n = 0;
		for (int i = 0; i < B.ncards && n < 1024; i++)
			if (B.cards[i].holder != B.me)
				opts[n++] = B.cards[i].id;
		int card = n && rnd(r, 2) ? opts[rnd(r, n)] : unknown_card_id();
		snprintf(buf, sizeof buf, "{\"command\":\"%s\",\"cardId\":%d}\n",
			 rnd(r, 2) ? "ContributeCard" : "UseCard", card);
		send_raw(buf, strlen(buf));
		*kind = INV_DECODED;
		return "a card we do not hold";
	}
	case 16:
		switch (rnd(r, 3)) {
		case 0:
			send_str("{\"command\":\"Register\",\"playerName\":\"again\"}\n");
			break;
		case 1:
			send_str("{\"command\":\"StartGame\"}\n");
			break;
		default:
			snprintf(buf, sizeof buf,
				 "{\"command\":\"SelectCharacters\",\"characterId0\":%d,\"characterId1\":%d}\n",
				 B.chrs[0].id, B.chrs[B.nchrs > 1 ? 1 : 0].id);
			send_raw(buf, strlen(buf));
			break;
		}
		*kind = INV_DECODED;
		return "a command of another phase";
	case 17:
		if (rnd(r, 2))
			send_str("\n");
		else
			send_str("   \r\n");
		*kind = INV_BLANK;
		return "an empty line";
	case 18:
		snprintf(buf, sizeof buf, "{\"command\":\"Search\",\"characterId\":%d,\"x\":\"\xff\xfe\"}\n",
			 unknown_char_id());
		send_raw(buf, strlen(buf));
		return "invalid UTF-8";
	case 19:
		send_raw("{\"command\":\"EndTurn\"\0}\n", sizeof "{\"command\":\"EndTurn\"\0}\n" - 1);
		return "a NUL byte";
	case 20: {
		/* deep nesting (cJSON's limit is 1000), ~12 KB */
		int depth = 3000 + rnd(r, 3000);
		size_t cap = (size_t)depth * 2 + 128, n = 0;
		char *p = xcalloc(cap, 1);
		n += (size_t)snprintf(p, cap, "{\"command\":\"Search\",\"characterId\":%d,\"x\":",
				      unknown_char_id());
		for (int i = 0; i < depth; i++)
			p[n++] = '[';
		for (int i = 0; i < depth; i++)
			p[n++] = ']';
		p[n++] = '}';
		p[n++] = '\n';
		send_raw(p, n);
		free(p);
		return "deeply nested JSON";
	}
	case 21:
		send_str("{\"command\":\"EndTurn\"} x\n");
		return "trailing garbage";
	default: {
		/* a long line within the 64 KiB limit */
		size_t len = 30000 + (size_t)rnd(r, 30000), n = 0;
		char *p = xcalloc(len + 128, 1);
		n += (size_t)snprintf(p, 128, "{\"command\":\"Search\",\"characterId\":%d,\"pad\":\"",
				      unknown_char_id());
		memset(p + n, 'a', len);
		n += len;
		memcpy(p + n, "\"}\n", 3);
		n += 3;
		send_raw(p, n);
		free(p);
		*kind = INV_DECODED;
		return "a long line";
	}
	}
}

/* --stall: stop answering for good; the server's --timeout removes us */
static bool maybe_stall(void)
{
	if (B.stalled || !chance(&B.rng, B.stall_pct))
		return B.stalled;
	B.stalled = true;
	if (B.log)
		fprintf(B.log, "! stalling: no more commands\n");
	return true;
}

/* --disconnect: hang up (close the socket), or send a line over the 64 KiB
 * limit, which the server answers with CommandFailed before it closes. */
static bool maybe_disconnect(uint64_t *r, double pct)
{
	if (B.overlong_sent || B.quit || B.stalled || !chance(r, pct))
		return false;
	if (rnd(r, 2)) {
		if (B.log)
			fprintf(B.log, "! hanging up\n");
		B.quit = true;
		B.result = "disconnected";
		return true;
	}
	size_t len = 65537 + (size_t)rnd(r, 40000), n = 0;
	char *p = xcalloc(len + 64, 1);
	n += (size_t)snprintf(p, 64, "{\"command\":\"EndTurn\",\"pad\":\"");
	memset(p + n, 'z', len);
	n += len;
	memcpy(p + n, "\"}\n", 3);
	n += 3;
	send_raw(p, n);
	free(p);
	B.overlong_sent = true;
	return true;
}

static void act(void)
{
	if (B.overlong_sent || B.stalled)
		return;
	B.pend = PD_NONE;
	if (B.cmds_this_turn++ >= MAX_CMDS_PER_TURN) {
		sendf("{\"command\":\"EndTurn\"}");
		B.cmds_this_turn = 0;
		B.my_turn = false;
		return;
	}
	if (chance(&B.rng, B.leave_pct)) {
		B.sent_leave = true;
		B.my_turn = false;
		sendf("{\"command\":\"Leave\"}");
		return;
	}
	if (chance(&B.rng, B.invalid_pct)) {
		bool strict = B.oot_pending == 0 && !B.strict_off;
		enum inv_kind kind;
		const char *what = send_invalid(&B.rng, &kind, false);
		if (kind != INV_BLANK) {
			if (strict) {
				B.expect_fail = true;
				snprintf(B.expect_fail_what, sizeof B.expect_fail_what, "%s (in turn)", what);
			}
			/* bad input gets no new ActNow: go on after its CommandFailed */
			B.act_after_fail = kind == INV_BAD;
			return;
		}
		/* a blank line gets no answer at all: go on with a real command */
	}
	build_candidates();
	double end_w = ncands == 0 ? 1.0 : (B.ndice == 0 ? 0.4 : 0.12);
	if (chance(&B.rng, end_w * 100.0)) {
		sendf("{\"command\":\"EndTurn\"}");
		B.cmds_this_turn = 0;
		B.my_turn = false;
		return;
	}
	if (chance(&B.rng, 4)) {
		chaos_command();
		return;
	}
	double total = 0;
	for (int i = 0; i < ncands; i++)
		total += cands[i].w;
	double x = (double)(splitmix64(&B.rng) >> 11) / 9007199254740992.0 * total;
	int pick = ncands - 1;
	for (int i = 0; i < ncands; i++) {
		if (x < cands[i].w) {
			pick = i;
			break;
		}
		x -= cands[i].w;
	}
	B.pend = cands[pick].pend;
	B.pend_char = cands[pick].pend_char;
	sendf("%s", cands[pick].cmd);
}

static void select_characters(void)
{
	if (chance(&B.rng, B.invalid_pct)) {
		char buf[256];
		int a = B.offered[rnd(&B.rng, 4)], b2 = a;
		if (rnd(&B.rng, 2)) {
			/* one of them not offered */
			for (int i = 0; i < B.nchrs; i++) {
				int id = B.chrs[i].id;
				if (id != B.offered[0] && id != B.offered[1] && id != B.offered[2] &&
				    id != B.offered[3]) {
					b2 = id;
					break;
				}
			}
			if (b2 == a)
				b2 = unknown_char_id();
		}
		snprintf(buf, sizeof buf, "{\"command\":\"SelectCharacters\",\"characterId0\":%d,\"characterId1\":%d}\n",
			 a, b2);
		send_raw(buf, strlen(buf));
		if (B.oot_pending == 0 && !B.strict_off) {
			B.expect_fail = true;
			snprintf(B.expect_fail_what, sizeof B.expect_fail_what, "SelectCharacters %d %d", a, b2);
		}
	}
	int i = rnd(&B.rng, 4), j = rnd(&B.rng, 3);
	if (j >= i)
		j++;
	sendf("{\"command\":\"SelectCharacters\",\"characterId0\":%d,\"characterId1\":%d}", B.offered[i],
	      B.offered[j]);
}

/* Now and then, while the game runs and it is probably not our turn, a
 * command out of turn. It must fail either way (it may arrive in our turn). */
static void maybe_out_of_turn(void)
{
	if (!B.game_started || B.result || B.invalid_pct <= 0 || B.sent_leave || B.overlong_sent || B.stalled)
		return;
	if (!chance(&B.rng_oot, B.invalid_pct * 0.05))
		return;
	enum inv_kind kind;
	if (B.oot_commands && rnd(&B.rng_oot, 4) == 0 && rnd(&B.rng_oot, 10) == 0) {
		/* Leave is only for the active player (it may be judged in our
		 * turn, then we leave for real) */
		send_str("{\"command\":\"Leave\"}\n");
		B.oot_leave = true;
		kind = INV_DECODED;
	} else if (B.oot_commands && rnd(&B.rng_oot, 4) == 0) {
		/* a plausible command: out of turn, or else with an id no one owns */
		char buf[160];
		snprintf(buf, sizeof buf, "{\"command\":\"%s\",\"characterId\":%d,\"entrance\":0}\n",
			 rnd(&B.rng_oot, 2) ? "Attack" : "Barricade", unknown_char_id());
		send_raw(buf, strlen(buf));
		kind = INV_DECODED;
	} else {
		send_invalid(&B.rng_oot, &kind, !B.oot_commands);
	}
	if (kind == INV_BLANK)
		return; /* no answer to wait for */
	if (kind == INV_DECODED && !B.strict_off) {
		B.strict_off = true;
		if (B.log)
			fprintf(B.log, "# a well-formed command sent out of turn: strict checks off\n");
	}
	B.oot_pending++;
}

/* ---- events --------------------------------------------------------------------- */

enum ptype { P_INT, P_BOOL, P_STR, P_FOODR, P_MORALR };
#define F_OPT 1u
#define F_PAIR 2u
#define F_BASE 4u /* present in base, absent in revised */

struct pspec {
	const char *key;
	enum ptype type;
	unsigned flags;
};

struct espec {
	const char *name;
	struct pspec p[4];
};

#define NOP { NULL, P_INT, 0 }
static const struct espec especs[] = {
	{ "Config", { { "config", P_STR, 0 }, NOP, NOP, NOP } },
	{ "ActNow", { NOP, NOP, NOP, NOP } },
	{ "Characters",
	  { { "characterId0", P_INT, 0 }, { "characterId1", P_INT, 0 }, { "characterId2", P_INT, 0 },
	    { "characterId3", P_INT, 0 } } },
	{ "CommandFailed", { { "message", P_STR, 0 }, NOP, NOP, NOP } },
	{ "RegistrationAborted", { NOP, NOP, NOP, NOP } },
	{ "Player", { { "player", P_INT, 0 }, { "playerName", P_STR, 0 }, NOP, NOP } },
	{ "GameStarted", { NOP, NOP, NOP, NOP } },
	{ "CharacterSpawned", { { "player", P_INT, 0 }, { "characterId", P_INT, 0 }, NOP, NOP } },
	{ "ZombieSpawned", { { "locationId", P_INT, 0 }, { "entrance", P_INT, 0 }, NOP, NOP } },
	{ "ChildSpawned", { NOP, NOP, NOP, NOP } },
	{ "CardDrawn", { { "player", P_INT, 0 }, { "cardId", P_INT, 0 }, NOP, NOP } },
	{ "GameEnd", { { "win", P_BOOL, 0 }, NOP, NOP, NOP } },
	{ "NextRound", { { "round", P_INT, 0 }, NOP, NOP, NOP } },
	{ "Crisis", { { "crisisId", P_INT, 0 }, NOP, NOP, NOP } },
	{ "DieRolled", { { "player", P_INT, 0 }, { "value", P_INT, 0 }, NOP, NOP } },
	{ "AbilityUsed", { { "characterId", P_INT, 0 }, { "target", P_INT, F_OPT }, NOP, NOP } },
	{ "Barricaded",
	  { { "characterId", P_INT, 0 }, { "locationId", P_INT, 0 }, { "entrance", P_INT, 0 }, NOP } },
	{ "Moved",
	  { { "characterId", P_INT, 0 }, { "locationId", P_INT, 0 }, { "fuel", P_BOOL, F_BASE }, NOP } },
	{ "Frostbitten", { { "characterId", P_INT, 0 }, NOP, NOP, NOP } },
	{ "Wounded", { { "characterId", P_INT, 0 }, NOP, NOP, NOP } },
	{ "Bitten", { { "characterId", P_INT, F_OPT }, NOP, NOP, NOP } },
	{ "Contributed", { { "player", P_INT, 0 }, { "cardId", P_INT, 0 }, NOP, NOP } },
	{ "CardUsed",
	  { { "cardId", P_INT, 0 },
	    { "characterId", P_INT, F_OPT | F_PAIR },
	    { "target", P_INT, F_OPT | F_PAIR },
	    NOP } },
	{ "FoodChanged", { { "amount", P_INT, 0 }, { "reason", P_FOODR, 0 }, NOP, NOP } },
	{ "ColonyPhaseStarted", { NOP, NOP, NOP, NOP } },
	{ "StarvationTokenAdded", { NOP, NOP, NOP, NOP } },
	{ "MoralChanged", { { "amount", P_INT, 0 }, { "reason", P_MORALR, 0 }, NOP, NOP } },
	{ "SurvivorKilled", { { "characterId", P_INT, 0 }, NOP, NOP, NOP } },
	{ "ChildKilled", { NOP, NOP, NOP, NOP } },
	{ "BarricadeDestroyed", { { "locationId", P_INT, 0 }, { "entrance", P_INT, 0 }, NOP, NOP } },
	{ "WasteChanged", { { "amount", P_INT, 0 }, NOP, NOP, NOP } },
	{ "ZombieKilled",
	  { { "characterId", P_INT, 0 }, { "locationId", P_INT, 0 }, { "entrance", P_INT, 0 }, NOP } },
	{ "Searched", { { "characterId", P_INT, 0 }, { "locationId", P_INT, 0 }, NOP, NOP } },
	{ "Left", { { "player", P_INT, 0 }, NOP, NOP, NOP } },
};
#define NESPECS ((int)(sizeof especs / sizeof especs[0]))

static const char *const food_reasons[] = { "FOOD_ADDED", "FOOD_CONSUMED" };
static const char *const moral_reasons[] = { "CHARACTER_DIED", "CRISIS", "STARVATION_TOKEN", "WASTE" };

struct ev {
	const char *name;
	int v[4];
	bool has[4];
	const char *s; /* the string parameter, if any */
};

static void validate(const cJSON *root, struct ev *ev)
{
	const cJSON *jn = cJSON_GetObjectItemCaseSensitive(root, "event");
	if (!cJSON_IsString(jn) || !jn->valuestring)
		VIOLATION("an event line without a string \"event\"");
	const struct espec *sp = NULL;
	for (int i = 0; i < NESPECS; i++)
		if (strcmp(especs[i].name, jn->valuestring) == 0)
			sp = &especs[i];
	if (!sp)
		VIOLATION("unknown event \"%.64s\"", jn->valuestring);
	ev->name = sp->name;
	for (const cJSON *it = root->child; it; it = it->next) {
		if (!it->string)
			VIOLATION("%s: a member without a name", sp->name);
		if (strcmp(it->string, "event") == 0)
			continue;
		bool known = false;
		for (int i = 0; i < 4 && sp->p[i].key; i++)
			if (strcmp(sp->p[i].key, it->string) == 0)
				known = true;
		if (!known)
			VIOLATION("%s: unexpected parameter \"%.64s\"", sp->name, it->string);
	}
	int npair = 0, npair_has = 0;
	for (int i = 0; i < 4 && sp->p[i].key; i++) {
		const struct pspec *ps = &sp->p[i];
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, ps->key);
		if (ps->flags & F_PAIR) {
			npair++;
			if (it)
				npair_has++;
		}
		if (ps->flags & F_BASE) {
			if (B.revised && it)
				VIOLATION("%s: parameter %s must be absent in the revised edition", sp->name,
					  ps->key);
			if (!B.revised && !it)
				VIOLATION("%s: parameter %s missing (base edition)", sp->name, ps->key);
		}
		if (!it) {
			if (!(ps->flags & (F_OPT | F_BASE)))
				VIOLATION("%s: parameter %s missing", sp->name, ps->key);
			continue;
		}
		ev->has[i] = true;
		switch (ps->type) {
		case P_INT: {
			if (!cJSON_IsNumber(it) || !(it->valuedouble >= (double)INT_MIN) ||
			    !(it->valuedouble <= (double)INT_MAX) ||
			    it->valuedouble != (double)(int)it->valuedouble)
				VIOLATION("%s: parameter %s is not an integer", sp->name, ps->key);
			ev->v[i] = (int)it->valuedouble;
			break;
		}
		case P_BOOL:
			if (!cJSON_IsBool(it))
				VIOLATION("%s: parameter %s is not a boolean", sp->name, ps->key);
			ev->v[i] = cJSON_IsTrue(it);
			break;
		case P_STR:
			if (!cJSON_IsString(it) || !it->valuestring)
				VIOLATION("%s: parameter %s is not a string", sp->name, ps->key);
			ev->s = it->valuestring;
			break;
		case P_FOODR:
		case P_MORALR: {
			const char *const *names = ps->type == P_FOODR ? food_reasons : moral_reasons;
			int n = ps->type == P_FOODR ? 2 : 4;
			if (!cJSON_IsString(it) || !it->valuestring)
				VIOLATION("%s: parameter %s is not a string", sp->name, ps->key);
			ev->v[i] = -1;
			for (int k = 0; k < n; k++)
				if (strcmp(names[k], it->valuestring) == 0)
					ev->v[i] = k;
			if (ev->v[i] < 0)
				VIOLATION("%s: unknown %s \"%.64s\"", sp->name, ps->key, it->valuestring);
			break;
		}
		}
	}
	if (npair_has != 0 && npair_has != npair)
		VIOLATION("%s: characterId and target must come together", sp->name);
}

static int need_chr(const struct ev *ev, int id, bool alive)
{
	int c = find_chr(id);
	if (c < 0)
		VIOLATION("%s: unknown character %d", ev->name, id);
	if (alive && !B.chrs[c].alive)
		VIOLATION("%s: character %d is not alive", ev->name, id);
	return c;
}

static int need_loc(const struct ev *ev, int id)
{
	int l = find_loc(id);
	if (l < 0)
		VIOLATION("%s: unknown location %d", ev->name, id);
	return l;
}

static void need_entrance(const struct ev *ev, int l, int e)
{
	if (e < 0 || e >= B.locs[l].entrances)
		VIOLATION("%s: location %d has no entrance %d", ev->name, B.locs[l].id, e);
}

static int need_card(const struct ev *ev, int id)
{
	int c = find_card(id);
	if (c < 0)
		VIOLATION("%s: unknown card %d", ev->name, id);
	return c;
}

static void need_player(const struct ev *ev, int p)
{
	if (p < 0 || p >= B.nplayers)
		VIOLATION("%s: unknown player %d", ev->name, p);
}

static void check_entrance(const struct ev *ev, int l, int e)
{
	const struct loc *L = &B.locs[l];
	if (L->z[e] < 0 || L->bar[e] < 0 || L->z[e] + L->bar[e] > 3)
		VIOLATION("%s: location %d entrance %d now has %d zombies and %d barricades", ev->name, L->id, e,
			  L->z[e], L->bar[e]);
}

static void check_capacity(const struct ev *ev, int l)
{
	if (!B.locs[l].colony && chars_at(l) > B.locs[l].spaces)
		VIOLATION("%s: location %d holds %d characters, it has %d spaces", ev->name, B.locs[l].id,
			  chars_at(l), B.locs[l].spaces);
}

static void drop_hand(int p)
{
	for (int i = 0; i < B.ncards; i++)
		if (B.cards[i].holder == p)
			B.cards[i].holder = -1;
}

static void kill_char(const struct ev *ev, int c)
{
	struct chr *ch = &B.chrs[c];
	ch->alive = false;
	ch->loc = -1;
	ch->nequip = 0;
	(void)ev;
	if (ch->owner >= 0 && living_of(ch->owner) == 0)
		drop_hand(ch->owner);
}

static void move_char(const struct ev *ev, int c, int l)
{
	struct chr *ch = &B.chrs[c];
	if (ch->loc == l)
		VIOLATION("%s: character %d is already at location %d", ev->name, ch->id, B.locs[l].id);
	if (ch->moved)
		VIOLATION("%s: character %d moves a second time this round", ev->name, ch->id);
	ch->loc = l;
	ch->moved = true;
	check_capacity(ev, l);
}

static void injure(const struct ev *ev, int c, bool frost)
{
	struct chr *ch = &B.chrs[c];
	if (ch->wounds + ch->frost >= 3)
		VIOLATION("%s: character %d already has 3 injuries and should be dead", ev->name, ch->id);
	if (frost)
		ch->frost++;
	else
		ch->wounds++;
}

static void heal(int t)
{
	struct chr *ch = &B.chrs[t];
	if (ch->frost > 0)
		ch->frost--;
	else if (ch->wounds > 0)
		ch->wounds--;
}

static void finish(const char *result)
{
	B.result = result;
}

/* ---- what must come next ---------------------------------------------------------- */

static struct expect X(const char *name, int nargs, int a0, int a1, int a2)
{
	struct expect x;
	memset(&x, 0, sizeof x);
	x.kind = EXP_EXACT;
	x.name = name;
	x.nargs = nargs;
	x.a[0] = a0;
	x.a[1] = a1;
	x.a[2] = a2;
	return x;
}

static struct expect RESPAWN(int owner)
{
	struct expect x = X("CharacterSpawned", 1, owner, 0, 0);
	x.kind = EXP_RESPAWN;
	return x;
}

/* Insert n expectations, in order, before the ones already queued: they are
 * the immediate consequences of the event just handled. */
static void expect_front(const struct expect *xs, int n)
{
	if (B.nexq + n > MAX_EXPECT)
		die(EXIT_USAGE, "internal: expectation queue full");
	memmove(&B.exq[n], &B.exq[0], sizeof(struct expect) * (size_t)B.nexq);
	memcpy(B.exq, xs, sizeof(struct expect) * (size_t)n);
	B.nexq += n;
}

static void expect1(struct expect x)
{
	expect_front(&x, 1);
}

static void expect2(struct expect x, struct expect y)
{
	struct expect xs[2] = { x, y };
	expect_front(xs, 2);
}

static bool unused_exists(void)
{
	for (int i = 0; i < B.nchrs; i++)
		if (!B.chrs[i].spawned)
			return true;
	return false;
}

static void describe_expect(const struct expect *x, char *buf, size_t n)
{
	int k = snprintf(buf, n, "%s", x->name);
	for (int i = 0; i < x->nargs && k > 0 && (size_t)k < n; i++)
		k += snprintf(buf + k, n - (size_t)k, " %d", x->a[i]);
	if (x->any_gt && k > 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, " >%d", x->a[x->nargs]);
}

static void describe_event(const struct ev *ev, char *buf, size_t n)
{
	int k = snprintf(buf, n, "%s", ev->name);
	for (int i = 0; i < 4 && k > 0 && (size_t)k < n; i++)
		if (ev->has[i] && !(ev->s && i == 0 && strcmp(ev->name, "Player") != 0))
			k += snprintf(buf + k, n - (size_t)k, " %d", ev->v[i]);
}

static void match(const struct ev *ev, const struct expect *x, const char *ctx)
{
	bool ok = strcmp(ev->name, x->name) == 0;
	for (int i = 0; ok && i < x->nargs; i++)
		ok = ev->has[i] && ev->v[i] == x->a[i];
	if (ok && x->any_gt)
		ok = ev->v[x->nargs] > x->a[x->nargs];
	if (!ok) {
		char want[128], got[128];
		describe_expect(x, want, sizeof want);
		describe_event(ev, got, sizeof got);
		VIOLATION("%s: expected %s, got %s", ctx, want, got);
	}
}

static bool is_last_round(void)
{
	return B.revised ? B.round == 1 : B.round == B.goal_rounds;
}

static bool goal_reached(void)
{
	int bars = 0, zlocs = 0;
	for (int l = 0; l < B.nlocs; l++) {
		bool z = false;
		for (int e = 0; e < B.locs[l].entrances; e++) {
			bars += B.locs[l].bar[e];
			z = z || B.locs[l].z[e] > 0;
		}
		zlocs += z;
	}
	switch (B.goal_type) {
	case GOAL_BARRICADES:
		return bars >= B.goal_value;
	case GOAL_ZOMBIES:
		return zlocs <= B.goal_value;
	default:
		return is_last_round();
	}
}

/* The next event of the colony phase (behaviour.md 8), skipping steps that
 * send nothing. Deaths' consequences are in the queue, not here. */
static struct expect cp_expect(void)
{
	for (;;) {
		switch (B.cp) {
		case CP_FOOD:
			if (B.cp_need > 0 && B.food >= B.cp_need)
				return X("FoodChanged", 2, -B.cp_need, 1, 0);
			if (B.food < B.cp_need)
				return X("StarvationTokenAdded", 0, 0, 0, 0);
			B.cp = CP_STARV;
			continue;
		case CP_STARV:
			if (B.tokens > 0)
				return X("MoralChanged", 2, -B.tokens, 2, 0);
			B.cp = CP_WASTE;
			continue;
		case CP_WASTE:
			if (B.waste / 10 >= 1)
				return X("MoralChanged", 2, -(B.waste / 10), 3, 0);
			B.cp = CP_CRISIS;
			continue;
		case CP_CRISIS:
			if (B.crisis >= 0) {
				int req = B.crisis_required[B.crisis];
				if (B.contributed >= req + 2)
					return X("MoralChanged", 2, 1, 1, 0);
				if (B.contributed < req)
					return X("MoralChanged", 2, -B.crisis_moral[B.crisis], 1, 0);
			}
			B.cp = CP_ZOMBIES;
			B.zi = 0;
			B.zn = -1;
			continue;
		case CP_ZOMBIES: {
			if (B.zi >= B.nlocs) {
				B.cp = CP_GOAL;
				continue;
			}
			int l = B.zorder[B.zi];
			struct loc *L = &B.locs[l];
			if (B.zn < 0) {
				B.zn = L->colony ? (B.children + chars_at(l) + 1) / 2 : chars_at(l);
				B.zk = 0;
			}
			if (B.zk >= B.zn) {
				B.zi++;
				B.zn = -1;
				continue;
			}
			int e = B.zk % L->entrances;
			if (L->z[e] + L->bar[e] < 3)
				return X("ZombieSpawned", 2, L->id, e, 0);
			if (L->bar[e] > 0)
				return X("BarricadeDestroyed", 2, L->id, e, 0);
			if (L->colony && B.children > 0)
				return X("ChildKilled", 0, 0, 0, 0);
			int low = -1;
			for (int i = 0; i < B.nchrs; i++)
				if (B.chrs[i].alive && B.chrs[i].loc == l &&
				    (low < 0 || B.chrs[i].status < B.chrs[low].status))
					low = i;
			if (low >= 0)
				return X("SurvivorKilled", 1, B.chrs[low].id, 0, 0);
			B.zk++; /* nothing happens */
			continue;
		}
		case CP_GOAL:
			if (goal_reached())
				return X("GameEnd", 1, 1, 0, 0);
			if (is_last_round())
				return X("GameEnd", 1, 0, 0, 0);
			return X("NextRound", 1, B.revised ? B.round - 1 : B.round + 1, 0, 0);
		default:
			return X("(nothing)", 0, 0, 0, 0);
		}
	}
}

static void cp_advance(void)
{
	switch (B.cp) {
	case CP_FOOD:
		B.cp = CP_STARV;
		break;
	case CP_STARV:
		B.cp = CP_WASTE;
		break;
	case CP_WASTE:
		B.cp = CP_CRISIS;
		break;
	case CP_CRISIS:
		B.cp = CP_ZOMBIES;
		B.zi = 0;
		B.zn = -1;
		break;
	case CP_ZOMBIES:
		B.zk++;
		break;
	default:
		B.cp = CP_OFF;
		break;
	}
}

/* Check ev against what must come next; returns 1 when it was queued, 2
 * when it was a colony phase step, 0 when it is free. */
static int check_order(const struct ev *ev)
{
	const char *n = ev->name;
	if (strcmp(n, "CommandFailed") == 0 || (strcmp(n, "GameEnd") == 0 && B.moral <= 0))
		return 0;
	while (B.nexq > 0 && B.exq[0].kind == EXP_RESPAWN) {
		int q = B.exq[0].a[0];
		if (q >= 0 && q < B.nplayers && B.player_in[q] && living_of(q) == 0)
			break;
		memmove(&B.exq[0], &B.exq[1], sizeof(struct expect) * (size_t)--B.nexq);
	}
	if (B.nexq > 0) {
		struct expect x = B.exq[0];
		if (x.kind == EXP_RESPAWN && !unused_exists())
			x = X("Left", 1, x.a[0], 0, 0);
		match(ev, &x, "order");
		memmove(&B.exq[0], &B.exq[1], sizeof(struct expect) * (size_t)--B.nexq);
		return 1;
	}
	if (B.cp != CP_OFF) {
		struct expect x = cp_expect();
		match(ev, &x, "colony phase");
		return 2;
	}
	static const char *const never_free[] = { "ZombieSpawned", "BarricadeDestroyed", "ChildKilled",
						  "StarvationTokenAdded", "FoodChanged", "MoralChanged",
						  "Crisis", "DieRolled" };
	for (size_t i = 0; i < sizeof never_free / sizeof never_free[0]; i++)
		if (strcmp(n, never_free[i]) == 0) {
			char got[128];
			describe_event(ev, got, sizeof got);
			VIOLATION("%s out of place (not a consequence of the event before it)", got);
		}
	if (strcmp(n, "NextRound") == 0 && B.nrounds_seen > 0)
		VIOLATION("NextRound outside the colony phase");
	if (strcmp(n, "GameEnd") == 0)
		VIOLATION("GameEnd(%s) outside the colony phase's goal check with morale %d",
			  ev->v[0] ? "true" : "false", B.moral);
	return 0;
}

static void handle_event(const struct ev *ev, const char *line)
{
	const char *n = ev->name;
	const int *v = ev->v;
	(void)line;

	if (B.result)
		VIOLATION("event %s after the end (%s)", n, B.result);

	bool is_failed = strcmp(n, "CommandFailed") == 0;
	if (B.expect_fail && !is_failed)
		die(EXIT_SERVER, "the server accepted %s: answered with %s instead of CommandFailed",
		    B.expect_fail_what, n);
	B.expect_fail = false;

	if (B.expect_game_lost && strcmp(n, "GameEnd") != 0)
		VIOLATION("morale is %d but %s came instead of GameEnd(false)", B.moral, n);
	if (B.expect_waste_inc && strcmp(n, "WasteChanged") != 0)
		VIOLATION("%s came where WasteChanged(+1) was due", n);

	if (B.searched_loc >= 0 && strcmp(n, "CardDrawn") != 0) {
		struct chr *sc = &B.chrs[B.search_char];
		if (B.search_draws == 0) {
			if (strcmp(n, "CharacterSpawned") != 0 || v[0] != sc->owner)
				VIOLATION("Searched by character %d: neither a card nor a new character followed (%s)",
					  sc->id, n);
		} else if (B.search_draws != B.search_k) {
			VIOLATION("the search by character %d drew %d cards, expected %d", sc->id, B.search_draws,
				  B.search_k);
		} else if (B.search_bp >= 0) {
			sc->equip_spent[B.search_bp] = true;
		} else if (B.search_ab) {
			sc->uses++;
		}
		B.searched_loc = -1;
	}
	int order = B.got_config ? check_order(ev) : 0;

	if (!B.got_config && strcmp(n, "Config") != 0 && !is_failed && strcmp(n, "RegistrationAborted") != 0)
		VIOLATION("%s before Config", n);

	if (strcmp(n, "Config") == 0) {
		if (B.got_config)
			VIOLATION("a second Config");
		if (!ev->s || !*ev->s)
			VIOLATION("Config with an empty text");
		B.got_config = true;
		load_config(ev->s);
		printf("registered %s\n", B.name);
		fflush(stdout);
		if (B.invalid_pct > 0 && chance(&B.rng, B.invalid_pct * 3)) {
			send_str("{\"command\":\"Register\",\"playerName\":\"twice\"}\n");
			B.oot_pending++; /* its CommandFailed may come at any time */
		}
		if (B.start)
			sendf("{\"command\":\"StartGame\"}");
	} else if (strcmp(n, "ActNow") == 0) {
		if (!B.game_started || B.me < 0)
			VIOLATION("ActNow before the game started");
		if (living_of(B.me) == 0)
			VIOLATION("ActNow but we have no living character");
		B.my_turn = true;
		if (maybe_stall() || maybe_disconnect(&B.rng, B.disconnect_pct))
			;
		else
			act();
	} else if (strcmp(n, "Characters") == 0) {
		if (!B.game_started)
			VIOLATION("Characters before GameStarted");
		for (int i = 0; i < 4; i++) {
			int c = need_chr(ev, v[i], false);
			if (B.chrs[c].spawned)
				VIOLATION("Characters offers character %d, which is already in the game", v[i]);
			for (int j = 0; j < i; j++)
				if (v[j] == v[i])
					VIOLATION("Characters offers character %d twice", v[i]);
			B.offered[i] = v[i];
		}
		B.selecting = true;
		if (maybe_stall() || maybe_disconnect(&B.rng, B.disconnect_pct))
			;
		else
			select_characters();
	} else if (is_failed) {
		if (!ev->s || !*ev->s)
			VIOLATION("CommandFailed with an empty message");
		B.failed++;
		B.pend = PD_NONE;
		if (B.overlong_sent)
			B.overlong_answered = true;
		/* answers come in the order we sent: earlier out-of-turn lines first */
		if (B.oot_pending > 0) {
			B.oot_pending--;
		} else if (B.act_after_fail) {
			B.act_after_fail = false;
			act();
		}
	} else if (strcmp(n, "RegistrationAborted") == 0) {
		if (B.game_started)
			VIOLATION("RegistrationAborted after GameStarted");
		finish("aborted");
	} else if (strcmp(n, "Player") == 0) {
		if (!B.game_started)
			VIOLATION("Player before GameStarted");
		if (v[0] != B.nplayers || v[0] >= MAX_PLAYERS || v[0] >= B.max_players)
			VIOLATION("Player %d out of order (expected %d of at most %d)", v[0], B.nplayers,
				  B.max_players);
		B.player_names[B.nplayers] = strdup(ev->s ? ev->s : "");
		B.player_in[B.nplayers] = true;
		if (B.me < 0 && strcmp(ev->s, B.name) == 0)
			B.me = v[0];
		B.nplayers++;
	} else if (strcmp(n, "GameStarted") == 0) {
		if (B.game_started)
			VIOLATION("a second GameStarted");
		B.game_started = true;
	} else if (strcmp(n, "CharacterSpawned") == 0) {
		need_player(ev, v[0]);
		int c = need_chr(ev, v[1], false);
		if (B.me < 0)
			VIOLATION("CharacterSpawned before our own Player event");
		if (B.chrs[c].spawned)
			VIOLATION("character %d spawned twice", v[1]);
		if (!B.player_in[v[0]])
			VIOLATION("character %d spawned for player %d, who left", v[1], v[0]);
		struct chr *ch = &B.chrs[c];
		ch->spawned = ch->alive = true;
		ch->owner = v[0];
		ch->loc = B.colony;
		if (v[0] == B.me)
			B.selecting = false;
		if (order == 0 && B.nrounds_seen == 0) {
			/* a selection: the higher id next, then five start cards */
			struct expect xs[6];
			xs[0] = X("CharacterSpawned", 1, v[0], v[1], 0);
			xs[0].any_gt = true;
			for (int i = 1; i < 6; i++)
				xs[i] = X("CardDrawn", 1, v[0], 0, 0);
			expect_front(xs, 6);
		}
	} else if (strcmp(n, "ZombieSpawned") == 0) {
		int l = need_loc(ev, v[0]);
		need_entrance(ev, l, v[1]);
		B.locs[l].z[v[1]]++;
		check_entrance(ev, l, v[1]);
	} else if (strcmp(n, "ChildSpawned") == 0) {
		B.children++;
	} else if (strcmp(n, "CardDrawn") == 0) {
		need_player(ev, v[0]);
		int k = need_card(ev, v[1]);
		struct card *cd = &B.cards[k];
		if (cd->drawn)
			VIOLATION("card %d drawn twice", v[1]);
		cd->drawn = true;
		cd->holder = v[0];
		if (B.searched_loc >= 0) {
			if (v[0] != B.chrs[B.search_char].owner)
				VIOLATION("a search by character %d drew card %d for player %d",
					  B.chrs[B.search_char].id, v[1], v[0]);
			if (cd->deck != B.searched_loc)
				VIOLATION("search of location %d drew card %d from another pile",
					  B.locs[B.searched_loc].id, v[1]);
			B.locs[B.searched_loc].deck_left--;
			B.search_draws++;
		} else if (cd->deck != B.colony) {
			VIOLATION("card %d drawn without a search, but it is not a start card", v[1]);
		}
	} else if (strcmp(n, "GameEnd") == 0) {
		if (!B.game_started)
			VIOLATION("GameEnd before GameStarted");
		if (B.expect_game_lost && v[0])
			VIOLATION("morale is %d but the game is won", B.moral);
		B.expect_game_lost = false;
		B.nexq = 0;
		B.cp = CP_OFF;
		finish(v[0] ? "win" : "lose");
	} else if (strcmp(n, "NextRound") == 0) {
		int want = B.revised ? B.goal_rounds - B.nrounds_seen : B.nrounds_seen + 1;
		if (v[0] != want)
			VIOLATION("NextRound %d, expected %d", v[0], want);
		B.nrounds_seen++;
		B.round = v[0];
		if (B.round < 1 || B.round > B.goal_rounds)
			VIOLATION("NextRound %d of %d", B.round, B.goal_rounds);
		expect1(X("Crisis", 0, 0, 0, 0));
		B.ndice = 0;
		B.my_turn = false;
		B.crisis = -1;
		B.cleaned_this_round = false;
		B.cmds_this_turn = 0;
		for (int i = 0; i < B.nchrs; i++) {
			B.chrs[i].moved = false;
			B.chrs[i].uses = 0;
			for (int k = 0; k < B.chrs[i].nequip; k++)
				B.chrs[i].equip_spent[k] = false;
		}
	} else if (strcmp(n, "Crisis") == 0) {
		B.crisis = -1;
		for (int i = 0; i < B.ncrises; i++)
			if (B.crisis_ids[i] == v[0])
				B.crisis = i;
		if (B.crisis < 0)
			VIOLATION("unknown crisis %d", v[0]);
		B.contributed = 0;
		struct expect dice[MAX_EXPECT];
		int nd = 0;
		for (int p = 0; p < B.nplayers; p++) {
			if (!B.player_in[p])
				continue;
			for (int k = living_of(p) + 1; k > 0 && nd < MAX_EXPECT - 8; k--)
				dice[nd++] = X("DieRolled", 1, p, 0, 0);
		}
		expect_front(dice, nd);
	} else if (strcmp(n, "DieRolled") == 0) {
		need_player(ev, v[0]);
		if (v[1] < 1 || v[1] > 6)
			VIOLATION("DieRolled value %d", v[1]);
		if (v[0] == B.me && B.ndice < MAX_DICE)
			B.dice[B.ndice++] = v[1];
	} else if (strcmp(n, "AbilityUsed") == 0) {
		int c = need_chr(ev, v[0], true);
		struct chr *ch = &B.chrs[c];
		ch->uses++;
		switch (ch->ab) {
		case AB_FEED:
			if (ev->has[1])
				VIOLATION("AbilityUsed FEED with a target");
			B.food += ch->ab_num;
			break;
		case AB_HEAL: {
			if (!ev->has[1])
				VIOLATION("AbilityUsed HEAL without a target");
			int t = need_chr(ev, v[1], true);
			if (B.chrs[t].loc != ch->loc)
				VIOLATION("HEAL of character %d at another location", v[1]);
			if (B.chrs[t].wounds + B.chrs[t].frost == 0)
				VIOLATION("HEAL of uninjured character %d", v[1]);
			heal(t);
			break;
		}
		case AB_BARRICADE: {
			if (!ev->has[1])
				VIOLATION("AbilityUsed BARRICADE without a target");
			int l = ch->loc;
			need_entrance(ev, l, v[1]);
			int space = 3 - B.locs[l].z[v[1]] - B.locs[l].bar[v[1]];
			if (space <= 0)
				VIOLATION("BARRICADE ability at a full entrance");
			B.locs[l].bar[v[1]] += space < ch->ab_num ? space : ch->ab_num;
			break;
		}
		case AB_KILL:
			if (!ev->has[1])
				VIOLATION("AbilityUsed KILL without a target");
			need_entrance(ev, ch->loc, v[1]);
			if (ch->loc != ch->ab_loc)
				VIOLATION("KILL ability used away from its location");
			if (B.locs[ch->loc].z[v[1]] == 0)
				VIOLATION("KILL ability at an entrance without zombies");
			if (ch->ab_children && B.children == 0)
				VIOLATION("KILL ability (children) used without a child in the colony");
			{
				int z = B.locs[ch->loc].z[v[1]];
				if (z > ch->ab_num)
					z = ch->ab_num;
				struct expect xs[3];
				for (int i = 0; i < z && i < 3; i++)
					xs[i] = X("ZombieKilled", 3, ch->id, B.locs[ch->loc].id, v[1]);
				expect_front(xs, z < 3 ? z : 3);
			}
			if (B.pend == PD_KILL && B.pend_char == c)
				use_die(ch->ab_die);
			break;
		default:
			VIOLATION("AbilityUsed for character %d, whose ability is passive", v[0]);
		}
		B.pend = PD_NONE;
	} else if (strcmp(n, "Barricaded") == 0) {
		int c = need_chr(ev, v[0], true);
		int l = need_loc(ev, v[1]);
		need_entrance(ev, l, v[2]);
		if (B.chrs[c].loc != l)
			VIOLATION("Barricaded at location %d, character %d is elsewhere", v[1], v[0]);
		B.locs[l].bar[v[2]]++;
		check_entrance(ev, l, v[2]);
		if (B.pend == PD_BARRICADE && B.pend_char == c) {
			int h = B.revised ? unspent_equip(&B.chrs[c], CT_HAMMER) : -1;
			if (h >= 0)
				B.chrs[c].equip_spent[h] = true;
			else
				use_die(1);
		}
		B.pend = PD_NONE;
	} else if (strcmp(n, "Moved") == 0) {
		int c = need_chr(ev, v[0], true);
		int l = need_loc(ev, v[1]);
		move_char(ev, c, l);
		if (!B.revised && v[2]) {
			int owner = B.chrs[c].owner, best = -1;
			for (int i = 0; i < B.ncards; i++)
				if (B.cards[i].holder == owner && B.cards[i].type == CT_FUEL &&
				    (best < 0 || B.cards[i].id < B.cards[best].id))
					best = i;
			if (best < 0)
				VIOLATION("Moved with fuel, but player %d holds no fuel card", owner);
			B.cards[best].holder = -1;
			B.expect_waste_inc = true;
			expect1(X("WasteChanged", 0, 0, 0, 0));
		}
	} else if (strcmp(n, "Frostbitten") == 0 || strcmp(n, "Wounded") == 0) {
		int c = need_chr(ev, v[0], true);
		injure(ev, c, n[0] == 'F');
		if (B.chrs[c].wounds + B.chrs[c].frost >= 3)
			expect1(X("SurvivorKilled", 1, v[0], 0, 0));
	} else if (strcmp(n, "Bitten") == 0) {
		if (ev->has[0]) {
			int c = need_chr(ev, v[0], true);
			int q = B.chrs[c].owner;
			kill_char(ev, c);
			expect2(X("MoralChanged", 2, -1, 0, 0), RESPAWN(q));
		} else {
			expect1(X("MoralChanged", 2, -1, 0, 0));
			if (!B.revised)
				VIOLATION("a child was bitten in the base edition");
			if (--B.children < 0)
				VIOLATION("a child was bitten, but there is none");
		}
	} else if (strcmp(n, "Contributed") == 0) {
		need_player(ev, v[0]);
		int k = need_card(ev, v[1]);
		if (B.cards[k].holder != v[0])
			VIOLATION("player %d contributed card %d, which it does not hold", v[0], v[1]);
		if (!crisis_accepts(B.cards[k].type))
			VIOLATION("card %d (%s) does not match the crisis", v[1], ctype_names[B.cards[k].type]);
		B.cards[k].holder = -1;
		B.contributed++;
	} else if (strcmp(n, "CardUsed") == 0) {
		int k = need_card(ev, v[0]);
		struct card *cd = &B.cards[k];
		int holder = cd->holder;
		if (holder < 0)
			VIOLATION("card %d used, but no one holds it", v[0]);
		cd->holder = -1;
		bool target = ev->has[1];
		int c = target ? need_chr(ev, v[1], true) : -1;
		if (target && B.chrs[c].owner != holder)
			VIOLATION("card %d used with character %d of another player", v[0], v[1]);
		switch (cd->type) {
		case CT_FOOD:
		case CT_STUFF:
			if (target)
				VIOLATION("%s card %d used with a target", ctype_names[cd->type], v[0]);
			if (cd->type == CT_STUFF && holder == B.me)
				use_die(1);
			B.expect_waste_inc = true;
			expect2(X("WasteChanged", 0, 0, 0, 0), cd->type == CT_FOOD
								     ? X("FoodChanged", 2, cd->amount, 0, 0)
								     : X("DieRolled", 1, holder, 0, 0));
			break;
		case CT_MEDICINE: {
			if (!target)
				VIOLATION("medicine %d used without a target", v[0]);
			int t = need_chr(ev, v[2], true);
			if (B.chrs[t].loc != B.chrs[c].loc || B.chrs[t].wounds + B.chrs[t].frost == 0)
				VIOLATION("medicine %d on character %d, not injured or elsewhere", v[0], v[2]);
			heal(t);
			B.expect_waste_inc = true;
			expect1(X("WasteChanged", 0, 0, 0, 0));
			break;
		}
		case CT_LOCK:
		case CT_SCISSORS: {
			if (!target)
				VIOLATION("%s %d used without a target", ctype_names[cd->type], v[0]);
			int l = B.chrs[c].loc;
			need_entrance(ev, l, v[2]);
			if (cd->type == CT_LOCK) {
				B.locs[l].bar[v[2]]++;
				check_entrance(ev, l, v[2]);
			} else if (B.locs[l].z[v[2]] == 0) {
				VIOLATION("scissors at an entrance without zombies");
			}
			B.expect_waste_inc = true;
			if (cd->type == CT_LOCK)
				expect1(X("WasteChanged", 0, 0, 0, 0));
			else
				expect2(X("WasteChanged", 0, 0, 0, 0), X("ZombieKilled", 3, v[1], B.locs[l].id, v[2]));
			break;
		}
		case CT_FUEL:
			if (!B.revised)
				VIOLATION("fuel card %d played in the base edition", v[0]);
			if (!target)
				VIOLATION("fuel %d used without a target", v[0]);
			move_char(ev, c, need_loc(ev, v[2]));
			B.expect_waste_inc = true;
			expect1(X("WasteChanged", 0, 0, 0, 0));
			break;
		default: {
			if (!B.revised)
				VIOLATION("equipment card %d played in the base edition", v[0]);
			if (!target)
				VIOLATION("equipment %d used without a target", v[0]);
			int t = need_chr(ev, v[2], true);
			if (B.chrs[t].loc != B.chrs[c].loc)
				VIOLATION("equipment %d given to character %d at another location", v[0], v[2]);
			struct chr *tc = &B.chrs[t];
			if (tc->nequip < MAX_EQUIP) {
				tc->equip[tc->nequip] = k;
				tc->equip_spent[tc->nequip] = false;
				tc->nequip++;
			}
			break;
		}
		}
	} else if (strcmp(n, "FoodChanged") == 0) {
		if ((v[1] == 0 && v[0] <= 0) || (v[1] == 1 && v[0] >= 0))
			VIOLATION("FoodChanged %d with reason %s", v[0], food_reasons[v[1]]);
		B.food += v[0];
		if (B.food < 0)
			VIOLATION("food dropped to %d", B.food);
	} else if (strcmp(n, "ColonyPhaseStarted") == 0) {
		if (B.cp != CP_OFF || order != 0)
			VIOLATION("ColonyPhaseStarted inside the colony phase");
		B.cp = CP_FOOD;
		B.cp_need = (B.children + chars_at(B.colony) + 1) / 2;
		B.ndice = 0;
		B.my_turn = false;
	} else if (strcmp(n, "StarvationTokenAdded") == 0) {
		B.tokens++;
	} else if (strcmp(n, "MoralChanged") == 0) {
		B.moral += v[0];
		if (B.moral <= 0)
			B.expect_game_lost = true;
	} else if (strcmp(n, "SurvivorKilled") == 0) {
		int c = need_chr(ev, v[0], true);
		int q = B.chrs[c].owner;
		kill_char(ev, c);
		expect2(X("MoralChanged", 2, -1, 0, 0), RESPAWN(q));
	} else if (strcmp(n, "ChildKilled") == 0) {
		expect1(X("MoralChanged", 2, -1, 0, 0));
		if (--B.children < 0)
			VIOLATION("a child was killed, but there is none");
	} else if (strcmp(n, "BarricadeDestroyed") == 0) {
		int l = need_loc(ev, v[0]);
		need_entrance(ev, l, v[1]);
		B.locs[l].bar[v[1]]--;
		check_entrance(ev, l, v[1]);
	} else if (strcmp(n, "WasteChanged") == 0) {
		int old = B.waste;
		B.waste = B.revised ? B.waste + v[0] : v[0];
		if (B.waste < 0)
			VIOLATION("the waste pile dropped to %d", B.waste);
		if (B.expect_waste_inc && B.waste != old + 1)
			VIOLATION("WasteChanged from %d to %d where one card was added", old, B.waste);
		if (!B.expect_waste_inc && B.waste >= old)
			VIOLATION("WasteChanged from %d to %d without a card played", old, B.waste);
		if (!B.expect_waste_inc && B.pend == PD_CLEAN) {
			struct chr *ch = &B.chrs[B.pend_char];
			int swab = B.revised ? unspent_equip(ch, CT_SWAB) : -1;
			if (swab >= 0)
				ch->equip_spent[swab] = true;
			else if (!(B.revised && ch->ab == AB_TRASH))
				use_die(1);
			B.cleaned_this_round = true;
			B.pend = PD_NONE;
		}
		B.expect_waste_inc = false;
	} else if (strcmp(n, "ZombieKilled") == 0) {
		int c = need_chr(ev, v[0], true);
		int l = need_loc(ev, v[1]);
		need_entrance(ev, l, v[2]);
		if (B.chrs[c].loc != l)
			VIOLATION("ZombieKilled at location %d, character %d is elsewhere", v[1], v[0]);
		B.locs[l].z[v[2]]--;
		check_entrance(ev, l, v[2]);
		if (B.pend == PD_ATTACK && B.pend_char == c) {
			use_die(B.chrs[c].attack);
			B.pend = PD_NONE;
		}
	} else if (strcmp(n, "Searched") == 0) {
		int c = need_chr(ev, v[0], true);
		int l = need_loc(ev, v[1]);
		if (B.chrs[c].loc != l)
			VIOLATION("Searched at location %d, character %d is elsewhere", v[1], v[0]);
		if (B.locs[l].colony)
			VIOLATION("Searched in the colony");
		if (B.locs[l].deck_left <= 0)
			VIOLATION("Searched at location %d, whose pile is empty", v[1]);
		B.searched_loc = l;
		B.search_draws = 0;
		{
			struct chr *ch = &B.chrs[c];
			int k = 1;
			B.search_char = c;
			B.search_bp = -1;
			B.search_ab = false;
			for (int i = ch->nequip - 1; B.revised && i >= 0; i--) {
				const struct card *bp = &B.cards[ch->equip[i]];
				if (bp->type == CT_BLUEPRINT && !ch->equip_spent[i] && bp->bp_loc == l) {
					B.search_bp = i;
					break;
				}
			}
			if (B.search_bp >= 0) {
				k = 2;
			} else if (ch->ab == AB_SEARCH && ch->ab_loc == l && ch->uses < ch->ab_max) {
				k = ch->ab_num + 1;
				B.search_ab = true;
			}
			B.search_k = k < B.locs[l].deck_left ? k : B.locs[l].deck_left;
		}
		if (B.pend == PD_SEARCH && B.pend_char == c)
			use_die(B.chrs[c].search);
		B.pend = PD_NONE;
	} else if (strcmp(n, "Left") == 0) {
		need_player(ev, v[0]);
		if (!B.player_in[v[0]])
			VIOLATION("player %d left twice", v[0]);
		B.player_in[v[0]] = false;
		drop_hand(v[0]);
		{
			struct expect xs[64];
			int nx = 0;
			bool done[4096] = { false };
			for (;;) {
				int best = -1;
				for (int i = 0; i < B.nchrs && i < 4096; i++)
					if (!done[i] && B.chrs[i].alive && B.chrs[i].owner == v[0] &&
					    (best < 0 || B.chrs[i].status > B.chrs[best].status))
						best = i;
				if (best < 0 || nx >= 64)
					break;
				done[best] = true;
				xs[nx++] = X("SurvivorKilled", 1, B.chrs[best].id, 0, 0);
			}
			expect_front(xs, nx);
		}
		if (v[0] == B.me) {
			if (!B.sent_leave && !B.oot_leave && !B.stalled && living_of(B.me) > 0 && !B.selecting)
				die(EXIT_SERVER, "we were removed (Left) while we still had %d living characters "
						 "and never sent Leave (server --timeout?)",
				    living_of(B.me));
			finish("left");
		}
	}
	if (order == 2)
		cp_advance();
}

static void process_line(char *line, size_t len)
{
	if (len > 0 && line[len - 1] == '\r')
		VIOLATION("an event line ends with CRLF");
	trace('<', line, len);
	B.events++;
	if (B.max_events > 0 && B.events > B.max_events)
		die(EXIT_STALL, "more than %ld events (--max-events)", B.max_events);
	if (B.result)
		VIOLATION("an event after the end (%s): %.200s", B.result, line);
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(line, len, &end, 0);
	if (!root)
		VIOLATION("unparseable event line: %.200s", line);
	if (end != line + len)
		VIOLATION("garbage after the JSON object: %.200s", line);
	if (!cJSON_IsObject(root))
		VIOLATION("event line is not a JSON object: %.200s", line);
	struct ev ev;
	memset(&ev, 0, sizeof ev);
	validate(root, &ev);
	handle_event(&ev, line);
	cJSON_Delete(root);
	/* out of turn only where the event sequence is the same in every run
	 * (not on our own CommandFailed answers) and not while we must answer */
	if (!B.result && !B.my_turn && !B.selecting && strcmp(ev.name, "ActNow") != 0 &&
	    strcmp(ev.name, "CommandFailed") != 0 && strcmp(ev.name, "Characters") != 0) {
		maybe_out_of_turn();
		if (B.game_started)
			maybe_disconnect(&B.rng_oot, B.disconnect_pct * 0.02);
	}
}

/* ---- connection ------------------------------------------------------------------ */

static int connect_to(const char *host, int port, double wait_sec)
{
	char portbuf[16];
	snprintf(portbuf, sizeof portbuf, "%d", port);
	double deadline = now_sec() + wait_sec;
	for (;;) {
		struct addrinfo hints, *res = NULL;
		memset(&hints, 0, sizeof hints);
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		int rc = getaddrinfo(host, portbuf, &hints, &res);
		if (rc != 0) {
			fprintf(stderr, "sopra-bot: %s: %s\n", host, gai_strerror(rc));
			return -1;
		}
		int err = 0;
		for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
			if (fd < 0) {
				err = errno;
				continue;
			}
			if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
				int one = 1;
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
				freeaddrinfo(res);
				return fd;
			}
			err = errno;
			close(fd);
		}
		freeaddrinfo(res);
		if (now_sec() >= deadline) {
			fprintf(stderr, "sopra-bot: cannot connect to %s:%d: %s\n", host, port, strerror(err));
			return -1;
		}
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

static void run(void)
{
	B.rcap = 1 << 16;
	B.rbuf = xcalloc(B.rcap, 1);
	if (B.invalid_pct > 0 && chance(&B.rng, B.invalid_pct * 3)) {
		/* before registering: must fail, must not abort the registration */
		if (rnd(&B.rng, 2))
			send_str("{\"command\":\"StartGame\"}\n");
		else
			send_str("{\"command\":\"Register\"}\n");
		B.expect_fail = true;
		snprintf(B.expect_fail_what, sizeof B.expect_fail_what, "a command before Register");
	}
	char reg[512];
	cJSON *nm = cJSON_CreateString(B.name);
	char *enc = cJSON_PrintUnformatted(nm);
	snprintf(reg, sizeof reg, "{\"command\":\"Register\",\"playerName\":%s}\n", enc ? enc : "\"bot\"");
	free(enc);
	cJSON_Delete(nm);
	send_raw(reg, strlen(reg));

	double last = now_sec();
	for (;;) {
		double left = B.idle_sec - (now_sec() - last);
		if (left <= 0) {
			if (B.result)
				die(EXIT_STALL, "the server did not close the connection %.0f s after the end (%s)",
				    B.idle_sec, B.result);
			die(EXIT_STALL, "no event for %.0f s", B.idle_sec);
		}
		struct pollfd pfd = { .fd = B.fd, .events = POLLIN, .revents = 0 };
		int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			die(EXIT_USAGE, "poll: %s", strerror(errno));
		}
		if (pr == 0)
			continue;
		if (B.rcap - B.rlen < 65536) {
			if (B.rcap >= MAX_LINE_IN)
				VIOLATION("an event line longer than %zu bytes", MAX_LINE_IN);
			B.rcap *= 2;
			char *nb = realloc(B.rbuf, B.rcap);
			if (!nb)
				die(EXIT_USAGE, "out of memory");
			B.rbuf = nb;
		}
		ssize_t got = recv(B.fd, B.rbuf + B.rlen, B.rcap - B.rlen - 1, 0);
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == ECONNRESET) {
				if (B.log)
					fprintf(B.log, "! connection reset by the server\n");
				got = 0;
			} else {
				die(EXIT_USAGE, "recv: %s", strerror(errno));
			}
		}
		if (got == 0) {
			if (B.rlen > 0)
				VIOLATION("the connection closed inside a line: %.200s", B.rbuf);
			if (B.log)
				fprintf(B.log, "! closed\n");
			if (B.overlong_sent && !B.result) {
				if (!B.overlong_answered)
					VIOLATION("closed without a CommandFailed for our over-long line");
				B.result = "dropped";
			}
			if (!B.result)
				B.result = "closed";
			return;
		}
		last = now_sec();
		B.rlen += (size_t)got;
		size_t start = 0;
		for (size_t i = B.rlen - (size_t)got; i < B.rlen; i++) {
			if (B.rbuf[i] != '\n')
				continue;
			B.rbuf[i] = '\0';
			process_line(B.rbuf + start, i - start);
			start = i + 1;
			if (B.quit)
				return;
		}
		memmove(B.rbuf, B.rbuf + start, B.rlen - start);
		B.rlen -= start;
	}
}

/* --lurk: an unregistered connection next to the game. It hears nothing but
 * the CommandFailed answers to its own lines, until the server closes. The
 * lines do not decode: they must not restart the server's --timeout
 * ("restarted by every decoded command") nor abort the registration. */
static void run_lurker(void)
{
	static const char *const lines[] = {
		"not json\n",
		"{\"command\":\"Move\"}\n",
		"[]\n",
		"{\"command\":\"Register\"}\n",
		"{\"command\":\"Register\",\"playerName\":5}\n",
		"{\"command\":\"SelectCharacters\",\"characterId0\":\"a\"}\n",
		"\xff\xfe\n",
		"{\"command\":\"EndTurn\",\"x\":1} trailing\n",
	};
	const int nlines = (int)(sizeof lines / sizeof lines[0]);
	char buf[65536];
	size_t len = 0;
	long sent = 0, answered = 0;
	double last = now_sec();
	for (;;) {
		if (now_sec() - last > B.idle_sec)
			die(EXIT_STALL, "no answer for %.0f s", B.idle_sec);
		/* one line every ~20 ms, at most one unanswered at a time */
		if (sent == answered && sent < 5000)
			send_str(lines[(sent++) % nlines]);
		struct pollfd pfd = { .fd = B.fd, .events = POLLIN, .revents = 0 };
		int pr = poll(&pfd, 1, 20);
		if (pr < 0 && errno != EINTR)
			die(EXIT_USAGE, "poll: %s", strerror(errno));
		if (pr <= 0)
			continue;
		ssize_t got = recv(B.fd, buf + len, sizeof buf - 1 - len, 0);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0) {
			if (len > 0)
				VIOLATION("the connection closed inside a line");
			B.result = "closed";
			return;
		}
		last = now_sec();
		len += (size_t)got;
		size_t start = 0;
		for (size_t i = 0; i < len; i++) {
			if (buf[i] != '\n')
				continue;
			buf[i] = '\0';
			trace('<', buf + start, i - start);
			B.events++;
			cJSON *root = cJSON_Parse(buf + start);
			const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "event");
			if (!cJSON_IsString(e) || strcmp(e->valuestring, "CommandFailed") != 0)
				VIOLATION("an unregistered connection received %.200s", buf + start);
			cJSON_Delete(root);
			B.failed++;
			answered++;
			start = i + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len >= sizeof buf - 1)
			VIOLATION("an over-long line to an unregistered connection");
	}
}

/* ---- main -------------------------------------------------------------------------- */

static const char usage_text[] =
	"Usage: sopra-bot --port N [options]\n"
	"Plays one game of SoPra of the Dead against a sopra-server with random moves.\n"
	"  --port N           server port (required)\n"
	"  --host HOST        server host (default 127.0.0.1)\n"
	"  --seed S           seed of the bot's own generator (default 1)\n"
	"  --name NAME        player name (default bot-SEED)\n"
	"  --start            send StartGame once the Config arrived\n"
	"  --rules E          base (default) or revised: must match the server\n"
	"  --invalid PCT      send a deliberately invalid command instead of a move\n"
	"                     with PCT %% probability (and now and then one out of turn)\n"
	"  --leave PCT        send Leave instead of a move with PCT %% probability\n"
	"  --disconnect PCT   instead of a move or a selection, with PCT %% probability\n"
	"                     (and rarely at any time), hang up or send a line over\n"
	"                     the 64 KiB limit (result disconnected / dropped)\n"
	"  --stall PCT        instead of a move or a selection, with PCT %% probability,\n"
	"                     stop answering; the server's --timeout must remove us\n"
	"  --lurk             never register: connect, send lines that do not decode\n"
	"                     (bad JSON, missing parameters) until the server closes;\n"
	"                     any event but CommandFailed is a violation\n"
	"  --max-events N     fail (exit 3) after more than N events (default 1000000)\n"
	"  --idle SECONDS     fail (exit 3) after SECONDS without an event (default 10)\n"
	"  --log FILE         write every line sent (>) and received (<) to FILE\n"
	"  --quiet            no trace on stderr, only errors and the summary\n"
	"Exit: 0 game over, 1 usage/connection, 2 protocol violation, 3 stall,\n"
	"      4 the server accepted an invalid command or dropped us.\n";

static bool parse_num(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (errno || end == s || *end || d < lo || d > hi)
		return false;
	*out = d;
	return true;
}

int main(int argc, char **argv)
{
	B.host = "127.0.0.1";
	B.port = -1;
	B.seed = 1;
	B.max_events = 1000000;
	B.idle_sec = 10;
	B.me = -1;
	B.name = NULL;
	B.searched_loc = -1;
	B.crisis = -1;
	const char *rules = "base";
	static char namebuf[64];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		double d;
#define NEEDVAL()                                                                    \
	do {                                                                         \
		if (!val) {                                                          \
			fprintf(stderr, "sopra-bot: %s needs a value\n%s", a, usage_text); \
			return EXIT_USAGE;                                           \
		}                                                                    \
		i++;                                                                 \
	} while (0)
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout);
			return 0;
		} else if (strcmp(a, "--port") == 0) {
			NEEDVAL();
			if (!parse_num(val, 1, 65535, &d))
				goto bad;
			B.port = (int)d;
		} else if (strcmp(a, "--host") == 0) {
			NEEDVAL();
			B.host = val;
		} else if (strcmp(a, "--seed") == 0) {
			NEEDVAL();
			char *end;
			errno = 0;
			long long s = strtoll(val, &end, 0);
			if (errno || end == val || *end)
				goto bad;
			B.seed = (uint64_t)s;
		} else if (strcmp(a, "--name") == 0) {
			NEEDVAL();
			B.name = val;
		} else if (strcmp(a, "--start") == 0) {
			B.start = true;
		} else if (strcmp(a, "--quiet") == 0) {
			B.quiet = true;
		} else if (strcmp(a, "--rules") == 0) {
			NEEDVAL();
			rules = val;
			if (strcmp(val, "base") != 0 && strcmp(val, "revised") != 0)
				goto bad;
		} else if (strcmp(a, "--invalid") == 0) {
			NEEDVAL();
			if (!parse_num(val, 0, 100, &B.invalid_pct))
				goto bad;
		} else if (strcmp(a, "--leave") == 0) {
			NEEDVAL();
			if (!parse_num(val, 0, 100, &B.leave_pct))
				goto bad;
		} else if (strcmp(a, "--stall") == 0) {
			NEEDVAL();
			if (!parse_num(val, 0, 100, &B.stall_pct))
				goto bad;
		} else if (strcmp(a, "--lurk") == 0) {
			B.lurk = true;
		} else if (strcmp(a, "--disconnect") == 0) {
			NEEDVAL();
			if (!parse_num(val, 0, 100, &B.disconnect_pct))
				goto bad;
		} else if (strcmp(a, "--max-events") == 0) {
			NEEDVAL();
			if (!parse_num(val, 1, 1e15, &d))
				goto bad;
			B.max_events = (long)d;
		} else if (strcmp(a, "--idle") == 0) {
			NEEDVAL();
			if (!parse_num(val, 0.1, 86400, &B.idle_sec))
				goto bad;
		} else if (strcmp(a, "--log") == 0) {
			NEEDVAL();
			B.log_path = val;
		} else {
			fprintf(stderr, "sopra-bot: unknown option '%s'\n%s", a, usage_text);
			return EXIT_USAGE;
		}
		continue;
bad:
		fprintf(stderr, "sopra-bot: invalid value '%s' for %s\n%s", val, a, usage_text);
		return EXIT_USAGE;
#undef NEEDVAL
	}
	if (!B.name) {
		snprintf(namebuf, sizeof namebuf, "bot-%llu", (unsigned long long)B.seed);
		B.name = namebuf;
	}
	if (B.port < 0) {
		fprintf(stderr, "sopra-bot: --port is required\n%s", usage_text);
		return EXIT_USAGE;
	}
	B.revised = strcmp(rules, "revised") == 0;
	uint64_t s = B.seed;
	B.rng = splitmix64(&s);
	B.rng_oot = splitmix64(&s) ^ 0x5DEECE66DULL;
	B.oot_commands = splitmix64(&s) % 2 == 0;
	B.rng_net = splitmix64(&s);
	signal(SIGPIPE, SIG_IGN);
	if (B.log_path) {
		B.log = fopen(B.log_path, "w");
		if (!B.log) {
			fprintf(stderr, "sopra-bot: %s: %s\n", B.log_path, strerror(errno));
			return EXIT_USAGE;
		}
		fprintf(B.log,
			"# sopra-bot --port %d --seed %llu --name %s --rules %s --invalid %g --leave %g "
			"--disconnect %g%s\n",
			B.port, (unsigned long long)B.seed, B.name, rules, B.invalid_pct, B.leave_pct,
			B.disconnect_pct, B.start ? " --start" : "");
	}
	B.fd = connect_to(B.host, B.port, 5.0);
	if (B.fd < 0) {
		B.result = "closed";
		summary();
		return EXIT_USAGE;
	}
	if (B.lurk) {
		printf("connected %s\n", B.name);
		fflush(stdout);
		run_lurker();
	} else {
		run();
	}
	close(B.fd);
	if (B.log)
		fclose(B.log);
	summary();
	return EXIT_OK;
}
