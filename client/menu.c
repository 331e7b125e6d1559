/*
 * menu: the commands possible now, by kind (menu.h). The commands and their
 * words come from the command layer (command.h); nothing here knows a rule
 * or a particular command.
 */
#include "menu.h"

#include "command.h"

int menu_kind_of_key(int ch)
{
	for (int t = 0; t < CMD_TYPE_COUNT; t++) {
		const struct client_command *row = client_command((enum cmd_type)t);
		if (row->key && row->key == ch)
			return t;
	}
	return -1;
}

/* Whether out already offers the same choice as c. */
static bool offered(const struct menu *out, const struct cmd *c)
{
	for (int i = 0; i < out->n; i++)
		if (client_same_choice(&out->items[i].cmd, c))
			return true;
	return false;
}

int menu_build(const struct model *m, const struct game_cmd_list *legal, enum cmd_type kind,
               struct menu *out)
{
	out->kind = kind;
	out->n = 0;
	for (size_t i = 0; i < legal->n && out->n < MENU_MAX_ITEMS; i++) {
		const struct cmd *c = &legal->v[i];
		if (c->type != kind || offered(out, c))
			continue;
		struct menu_item *it = &out->items[out->n++];
		it->cmd = *c;
		client_cmd_label(m, c, it->label, sizeof it->label);
	}
	return out->n;
}
