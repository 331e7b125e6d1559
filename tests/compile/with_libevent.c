/* Compile test: every project header together with libevent's, whose
 * `struct event`, `EV_*` and `event_*` names the project must not reuse.
 * Building this file is the test; running it checks nothing more. */
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/buffer.h>
#include <event2/listener.h>

#include "sopra/config.h"
#include "sopra/game.h"
#include "sopra/game_event.h"
#include "sopra/game_view.h"
#include "sopra/json.h"
#include "sopra/net.h"
#include "sopra/proto.h"
#include "sopra/rng.h"
#include "sopra/xalloc.h"

int main(void)
{
	struct event ev; /* libevent's */
	struct game_event gev = {.type = GEV_LEFT, .to = GEV_TO_ALL};
	(void)ev;
	return gev.type == GEV_LEFT && EV_READ != 0 ? 0 : 1;
}
