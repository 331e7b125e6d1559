/* `sopra-scenario --self-test`: checks the runner's own parsing and mapping
 * code (registered as ctest system_runner_selftest). */
#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "self-test %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, \
                    #cond);                                                            \
            failures++;                                                                \
        }                                                                              \
    } while (0)

#define CHECK_STR(got, want)                                                                 \
    do {                                                                                     \
        const char *g_ = (got), *w_ = (want);                                                \
        if (!g_ || strcmp(g_, w_) != 0) {                                                    \
            fprintf(stderr, "self-test %s:%d: got '%s', want '%s'\n", __FILE__, __LINE__,    \
                    g_ ? g_ : "(null)", w_);                                                 \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

/* Parse a one-step scenario body; returns the error or NULL. */
static char *parse(const char *body, scenario *sc)
{
    static char err[SCN_ERRLEN];
    char *text = malloc(strlen(body) + 100);
    sprintf(text, "config c.json\nseed 1\nclients 1 2\n%s\n", body);
    int rc = scn_parse(text, "dir", sc, err, sizeof err);
    free(text);
    return rc < 0 ? err : NULL;
}

static void test_headers(void)
{
    scenario sc;
    char err[SCN_ERRLEN];
    const char *text = "# comment line\n"
                       "config  basicConfig.json   # trailing comment\n"
                       "\n"
                       "seed    56\r\n"
                       "clients 3 1\t2\n"
                       "rules   revised # x\n"
                       "timeout 2\n"
                       "   # indented comment\n"
                       "3 > Register Anna\n"
                       "* < GameStarted\n"
                       "exit nonzero\n";
    CHECK(scn_parse(text, "/x/y", &sc, err, sizeof err) == 0);
    CHECK_STR(sc.config_path, "/x/y/basicConfig.json");
    CHECK(sc.seed == 56 && sc.timeout == 2 && sc.nclients == 3);
    CHECK(sc.clients[0] == 3 && sc.clients[1] == 1 && sc.clients[2] == 2);
    CHECK_STR(sc.rules, "revised");
    CHECK(sc.nsteps == 5); /* send, 3x expect, exit */
    CHECK(sc.steps[0].kind == STEP_SEND && sc.steps[0].line == 9 && sc.steps[0].client == 3);
    CHECK(sc.steps[1].kind == STEP_EXPECT && sc.steps[1].client == 3);
    CHECK(sc.steps[2].client == 1 && sc.steps[3].client == 2 && sc.steps[3].line == 10);
    CHECK(sc.steps[4].kind == STEP_EXIT && sc.steps[4].emode == EXIT_NONZERO);
    scn_free(&sc);

    /* defaults; invalid-config scenario gets an implicit exit nonzero */
    CHECK(scn_parse("config bad.json\nseed 0\n", "d", &sc, err, sizeof err) == 0);
    CHECK(sc.timeout == 30 && sc.rules == NULL && !sc.have_clients);
    CHECK(sc.nsteps == 1 && sc.steps[0].kind == STEP_EXIT && sc.steps[0].emode == EXIT_NONZERO);
    scn_free(&sc);

    CHECK(scn_parse("config c\nseed 0\nexit 3\n", "d", &sc, err, sizeof err) == 0);
    CHECK(sc.steps[0].emode == EXIT_CODE && sc.steps[0].ecode == 3);
    scn_free(&sc);

    /* errors carry the line number */
    CHECK(scn_parse("config c\nseed 0\nclients 1\n2 > Leave\n", "d", &sc, err, sizeof err) < 0);
    CHECK(strstr(err, "line 4") != NULL);
    CHECK(scn_parse("seed 0\nclients 1\n", "d", &sc, err, sizeof err) < 0);
    CHECK(scn_parse("config c\nseed 0\nclients 1\n1 > Leave\nseed 2\n", "d", &sc, err,
                    sizeof err) < 0);
    CHECK(strstr(err, "line 5") != NULL);
    CHECK(scn_parse("config c\nseed 0\nclients 1\nbogus 1\n", "d", &sc, err, sizeof err) < 0);
}

static void test_steps(void)
{
    scenario sc;
    char *e;

    e = parse("1 > Register \"Anna Lena \\\"A\\\" \\\\ x\"  # comment", &sc);
    CHECK(e == NULL);
    if (!e) {
        CHECK_STR(sc.steps[0].data,
                  "{\"command\":\"Register\",\"playerName\":\"Anna Lena \\\"A\\\" \\\\ x\"}\n");
        scn_free(&sc);
    }

    e = parse("2 > Move 2000 3001 false", &sc);
    CHECK(e == NULL);
    if (!e) {
        CHECK_STR(sc.steps[0].data, "{\"command\":\"Move\",\"characterId\":2000,"
                                    "\"locationId\":3001,\"fuel\":false}\n");
        CHECK(sc.steps[0].client == 2 && sc.steps[0].len == strlen(sc.steps[0].data));
        scn_free(&sc);
    }

    e = parse("1 > Move 2000", &sc); /* only the given params */
    CHECK(e == NULL);
    if (!e) {
        CHECK_STR(sc.steps[0].data, "{\"command\":\"Move\",\"characterId\":2000}\n");
        scn_free(&sc);
    }

    e = parse("1 > UseCard 1010 \"2000\" -1", &sc); /* quoted number stays a string */
    CHECK(e == NULL);
    if (!e) {
        CHECK_STR(sc.steps[0].data, "{\"command\":\"UseCard\",\"cardId\":1010,"
                                    "\"characterId\":\"2000\",\"target\":-1}\n");
        scn_free(&sc);
    }

    e = parse("1 > StartGame", &sc);
    CHECK(e == NULL);
    if (!e) {
        CHECK_STR(sc.steps[0].data, "{\"command\":\"StartGame\"}\n");
        scn_free(&sc);
    }

    CHECK(parse("1 > Leave 1", &sc) != NULL);      /* too many args */
    CHECK(parse("1 > Fly 1", &sc) != NULL);        /* unknown command */
    CHECK(parse("1 > Register \"x", &sc) != NULL); /* unterminated */
    CHECK(parse("1 > Register \"a\\n\"", &sc) != NULL); /* bad escape */
    CHECK(parse("1 < ? 3", &sc) != NULL);
    CHECK(parse("3 < ActNow", &sc) != NULL); /* client not listed */

    e = parse("1 >> {\"command\":\"Move\",\"characterId\":\"x\"}\\n # not a comment", &sc);
    CHECK(e == NULL);
    if (!e) {
        CHECK(sc.steps[0].kind == STEP_RAW);
        CHECK_STR(sc.steps[0].data, "{\"command\":\"Move\",\"characterId\":\"x\"}\n # not a comment");
        scn_free(&sc);
    }

    e = parse("1 >> a\\r\\n\\t\\\\\\x41\\x7e\\0b", &sc);
    CHECK(e == NULL);
    if (!e) {
        CHECK(sc.steps[0].len == 9);
        CHECK(memcmp(sc.steps[0].data, "a\r\n\t\\A~\0b", 9) == 0);
        scn_free(&sc);
    }
    CHECK(parse("1 >> \\xZZ", &sc) != NULL);
    CHECK(parse("1 >> \\q", &sc) != NULL);

    e = parse("1 < Player 0 \"Anna # not a comment\" # comment", &sc);
    CHECK(e == NULL);
    if (!e) {
        CHECK(sc.steps[0].kind == STEP_EXPECT);
        CHECK_STR(sc.steps[0].name, "Player");
        CHECK(sc.steps[0].args.n == 2);
        CHECK(sc.steps[0].args.v[0].kind == TOK_INT);
        CHECK_STR(sc.steps[0].args.v[1].text, "Anna # not a comment");
        scn_free(&sc);
    }

    e = parse("* < ?\n* closed\n1 closed", &sc);
    CHECK(e == NULL);
    if (!e) {
        CHECK(sc.nsteps == 5);
        CHECK(sc.steps[0].kind == STEP_ANY && sc.steps[1].kind == STEP_ANY);
        CHECK(sc.steps[2].kind == STEP_CLOSED && sc.steps[3].client == 2);
        CHECK(sc.steps[4].line == 6);
        scn_free(&sc);
    }
}

/* Map a JSON event line and render it in scenario syntax. */
static char *map(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    if (!o)
        return xstrdup("(bad json)");
    toklist t = {0};
    const char *name;
    char err[128];
    char *r;
    if (scn_event_tokens(o, &name, &t, err, sizeof err) < 0)
        r = xstrdup("(not an event)");
    else
        r = scn_render(name, &t);
    toklist_free(&t);
    cJSON_Delete(o);
    return r;
}

/* Does the scenario expectation `want` match the JSON event? */
static bool matches(const char *want, const char *json)
{
    toklist w = {0}, g = {0};
    char err[128];
    bool ok = false;
    if (scn_tokenize(want, &w, err, sizeof err) == 0 && w.n > 0) {
        cJSON *o = cJSON_Parse(json);
        const char *name;
        if (o && scn_event_tokens(o, &name, &g, err, sizeof err) == 0) {
            toklist args = {w.v + 1, w.n - 1, w.n - 1};
            ok = !strcmp(name, w.v[0].text) && scn_tokens_equal(&args, &g);
        }
        cJSON_Delete(o);
    }
    toklist_free(&w);
    toklist_free(&g);
    return ok;
}

#define CHECK_MAP(json, want)       \
    do {                            \
        char *m_ = map(json);       \
        CHECK_STR(m_, want);        \
        free(m_);                   \
    } while (0)

static void test_mapping(void)
{
    CHECK_MAP("{\"event\":\"Moved\",\"characterId\":2000,\"locationId\":3001,\"fuel\":false}",
              "Moved 2000 3001 false");
    CHECK_MAP("{\"locationId\":3001,\"characterId\":2000,\"event\":\"Moved\"}", "Moved 2000 3001");
    CHECK_MAP("{\"event\":\"AbilityUsed\",\"characterId\":2001}", "AbilityUsed 2001");
    CHECK_MAP("{\"event\":\"AbilityUsed\",\"target\":3,\"characterId\":2001}",
              "AbilityUsed 2001 3");
    CHECK_MAP("{\"event\":\"Bitten\"}", "Bitten");
    CHECK_MAP("{\"event\":\"Bitten\",\"characterId\":2003}", "Bitten 2003");
    CHECK_MAP("{\"event\":\"MoralChanged\",\"amount\":-1,\"reason\":\"STARVATION_TOKEN\"}",
              "MoralChanged -1 STARVATION_TOKEN");
    CHECK_MAP("{\"event\":\"Player\",\"player\":1,\"playerName\":\"Anna Lena\"}",
              "Player 1 \"Anna Lena\"");
    CHECK_MAP("{\"event\":\"Player\",\"player\":\"1\",\"playerName\":\"42\"}",
              "Player \"1\" \"42\"");
    CHECK_MAP("{\"event\":\"GameEnd\",\"win\":true}", "GameEnd true");
    CHECK_MAP("{\"event\":\"GameEnd\",\"win\":true,\"extra\":1}", "GameEnd true extra=1");
    CHECK_MAP("{\"event\":\"NextRound\",\"round\":1.5}", "NextRound 1.5");
    CHECK_MAP("{\"event\":\"CardUsed\",\"cardId\":1050,\"characterId\":2000,\"target\":3}",
              "CardUsed 1050 2000 3");
    CHECK_MAP("{\"command\":\"Leave\"}", "(not an event)");
    CHECK_MAP("[1]", "(not an event)");

    CHECK(matches("Moved 2000 3001 false",
                  "{\"event\":\"Moved\",\"characterId\":2000,\"locationId\":3001,\"fuel\":false}"));
    CHECK(!matches("Moved 2000 3001",
                   "{\"event\":\"Moved\",\"characterId\":2000,\"locationId\":3001,\"fuel\":false}"));
    CHECK(matches("Moved 2000 3001", "{\"event\":\"Moved\",\"characterId\":2000,\"locationId\":3001}"));
    CHECK(!matches("Moved 2000 3001 false",
                   "{\"event\":\"Moved\",\"characterId\":2000,\"locationId\":3001,\"fuel\":\"false\"}"));
    CHECK(matches("AbilityUsed 2001", "{\"event\":\"AbilityUsed\",\"characterId\":2001}"));
    CHECK(!matches("AbilityUsed 2001", "{\"event\":\"AbilityUsed\",\"characterId\":2001,\"target\":2}"));
    CHECK(matches("Bitten", "{\"event\":\"Bitten\"}"));
    CHECK(!matches("Bitten", "{\"event\":\"Bitten\",\"characterId\":2000}"));
    CHECK(matches("Bitten 2000", "{\"event\":\"Bitten\",\"characterId\":2000}"));
    CHECK(matches("MoralChanged -1 CHARACTER_DIED",
                  "{\"event\":\"MoralChanged\",\"amount\":-1,\"reason\":\"CHARACTER_DIED\"}"));
    CHECK(!matches("MoralChanged -1 CRISIS",
                   "{\"event\":\"MoralChanged\",\"amount\":-1,\"reason\":\"WASTE\"}"));
    CHECK(!matches("MoralChanged 1 CRISIS",
                   "{\"event\":\"MoralChanged\",\"amount\":-1,\"reason\":\"CRISIS\"}"));
    CHECK(matches("FoodChanged +2 FOOD_ADDED",
                  "{\"event\":\"FoodChanged\",\"amount\":2,\"reason\":\"FOOD_ADDED\"}"));
    CHECK(!matches("Player 0 Anna", "{\"event\":\"Player\",\"player\":\"0\",\"playerName\":\"Anna\"}"));
    CHECK(matches("Player 0 \"Anna Lena\"",
                  "{\"event\":\"Player\",\"player\":0,\"playerName\":\"Anna Lena\"}"));
    CHECK(!matches("GameEnd true", "{\"event\":\"GameEnd\",\"win\":true,\"x\":0}"));
    CHECK(!matches("GameEnd true", "{\"event\":\"GameStarted\"}"));
}

static void test_json_diff(void)
{
    cJSON *a = cJSON_Parse("{\"a\":[1,2,{\"b\":true}],\"c\":\"x\"}");
    cJSON *b = cJSON_Parse("{\"c\":\"x\",\"a\":[1,2,{\"b\":true}]}");
    cJSON *c = cJSON_Parse("{\"c\":\"x\",\"a\":[1,2,{\"b\":false}]}");
    cJSON *d = cJSON_Parse("{\"c\":\"x\",\"a\":[1,2]}");
    char buf[256];
    CHECK(!scn_json_diff(a, b, buf, sizeof buf));
    CHECK(scn_json_diff(a, c, buf, sizeof buf));
    CHECK(strstr(buf, "$.a[2].b") != NULL);
    CHECK(scn_json_diff(a, d, buf, sizeof buf));
    CHECK(strstr(buf, "elements") != NULL);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    cJSON_Delete(d);
}

int scn_self_test(void)
{
    failures = 0;
    test_headers();
    test_steps();
    test_mapping();
    test_json_diff();
    return failures;
}
