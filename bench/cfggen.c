/*
 * bench: generated configurations, so that the benchmark can vary players,
 * locations, deck sizes and game length independently of the examples.
 *
 * Layout: cards 1.., characters 100.., the colony CFG_COLONY_ID with one
 * entrance per player, locations 1..L, crises 100000... In `feed` mode every
 * character has FEED(1): the scripted client feeds once per turn, which
 * exactly covers the colony's hunger, and barricades its own colony entrance,
 * which absorbs that entrance's one zombie per round -- so a scripted game
 * lasts exactly `rounds` rounds and no character dies.
 */
#include "bench.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sbuf {
	char *d;
	size_t len, cap;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
sb_printf(struct sbuf *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		size_t room = b->cap - b->len;
		int n = vsnprintf(b->d ? b->d + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			die("vsnprintf");
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		b->cap = b->cap ? b->cap * 2 : 65536;
		while (b->cap - b->len <= (size_t)n)
			b->cap *= 2;
		b->d = xrealloc(b->d, b->cap);
	}
}

static const char *const abilities[] = {
	"{\"heal\":{}}",
	"{\"barricade\":{\"numBarricades\":1,\"maxActivations\":1}}",
	"{\"no_infection\":{}}",
	"{\"trash\":{\"numCards\":3}}",
	"{\"feed\":{\"numFood\":1}}",
	"{\"wound\":{\"before\":\"frostBite\",\"after\":\"wound\"}}",
	"{\"search\":{\"location\":1,\"numCards\":1,\"maxActivations\":1}}",
	"{\"kill\":{\"locationId\":1,\"dieValue\":4,\"numZombies\":1,\"maxActivations\":1}}",
};

static void card(struct sbuf *b, int id, bool first)
{
	static const char *const types[] = { "food", "fuel", "medicine", "stuff", "lock",
					     "scissors" };
	const char *t = types[id % 6];
	if (id % 6 == 0)
		sb_printf(b, "%s{\"%s\":{\"identifier\":%d,\"amount\":%d}}", first ? "" : ",", t,
			  id, 1 + id % 2);
	else
		sb_printf(b, "%s{\"%s\":{\"identifier\":%d}}", first ? "" : ",", t, id);
}

char *cfg_generate(const struct cfg_params *p)
{
	struct sbuf b = { 0 };
	int P = p->players, L = p->locations, D = p->cards_per_deck;
	if (D < 5 * P)
		D = 5 * P;
	int ncards = D * (L + 1);
	sb_printf(&b, "{\"maxPlayers\":%d,\n\"cards\":[", P);
	for (int id = 1; id <= ncards; id++)
		card(&b, id, id == 1);
	sb_printf(&b, "],\n\"characters\":[");
	int nch = 2 * P + 2 + p->extra_characters;
	for (int i = 0; i < nch; i++)
		sb_printf(&b,
			  "%s{\"name\":\"Survivor %d\",\"identifier\":%d,\"status\":%d,"
			  "\"attack\":%d,\"search\":%d,\"ability\":%s}",
			  i ? "," : "", i, 100 + i, 10 + i, 1 + i % 6, 1 + (i + 3) % 6,
			  p->feed ? abilities[4] : abilities[i % 8]);
	sb_printf(&b,
		  "],\n\"goal\":{\"rounds\":%d,\"moral\":%d,\"zombiesColony\":0,"
		  "\"zombiesLocations\":1,\"childrenInColony\":0,\"survive\":true},\n",
		  p->rounds, p->rounds + 10);
	sb_printf(&b, "\"locations\":[{\"colony\":{\"identifier\":%d,\"entrances\":%d,"
		      "\"startCards\":[",
		  CFG_COLONY_ID, P);
	int next = 1;
	for (int i = 0; i < D; i++)
		sb_printf(&b, "%s%d", i ? "," : "", next++);
	sb_printf(&b, "]}}");
	for (int l = 0; l < L; l++) {
		sb_printf(&b,
			  ",\n{\"name\":\"Location %d\",\"identifier\":%d,\"entrances\":%d,"
			  "\"survivorSpaces\":3,\"cards\":[",
			  l, CFG_FIRST_LOCATION_ID + l, 1 + l % 3);
		for (int i = 0; i < D; i++)
			sb_printf(&b, "%s%d", i ? "," : "", next++);
		sb_printf(&b, "]}");
	}
	sb_printf(&b, "],\n\"crises\":[");
	for (int r = 0; r < p->rounds; r++)
		sb_printf(&b, "%s{\"food\":{\"identifier\":%d,\"moralChange\":1,\"requiredCards\":1}}",
			  r ? "," : "", 100000 + r);
	sb_printf(&b, "]}\n");
	return b.d;
}

char *cfg_write_temp(const char *text, const char *tag)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	size_t n = strlen(dir) + strlen(tag) + 40;
	char *path = xmalloc(n);
	snprintf(path, n, "%s/sopra-bench-%s-XXXXXX", dir, tag);
	int fd = mkstemp(path);
	if (fd < 0)
		die("mkstemp %s", path);
	size_t len = strlen(text);
	write_all(fd, text, len);
	close(fd);
	return path;
}
