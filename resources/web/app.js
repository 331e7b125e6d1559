// The page of sopra-server's HTTP port (docs/web.md): play, watch and
// replay a game of SoPra of the Dead. Plain JavaScript, no build step,
// nothing loaded from elsewhere.
//
// The board is folded from the protocol's events (docs/protocol.md), the
// same lines a TCP client gets: the stream of /api/watch (a watcher) or
// /api/play (a seat). What a seat may do comes from the server -- the
// "me" event lists the player's legal commands as wire objects -- so the
// page knows no rules: it only labels those commands with the
// configuration's names and sends the one clicked.
"use strict";

const $ = (id) => document.getElementById(id);

// ---- the folded board ------------------------------------------------------

// A fresh board for a configuration: the state before any event. The
// goal's initial zombies, morale and children come with the first round
// (setUp): until the characters are chosen the colony is empty.
function newBoard(cfg, rules) {
  const b = {
    cfg, rules,
    locs: [], locById: {}, chars: {}, cards: {}, crises: {},
    players: [], food: 0, moral: 0, waste: 0, starvation: 0,
    children: 0, round: null, rounds: cfg.goal.rounds,
    crisis: null, contributed: 0, started: false, over: false, result: null,
    colonyPhase: false,
  };
  for (const entry of cfg.locations) {
    const colony = !!entry.colony;
    const l = colony ? entry.colony : entry;
    const loc = {
      id: l.identifier, name: colony ? "Colony" : l.name, colony,
      entrances: l.entrances, spaces: colony ? 0 : l.survivorSpaces,
      zombies: new Array(l.entrances).fill(0), barricades: new Array(l.entrances).fill(0),
      pile: (colony ? l.startCards : l.cards) || [],
    };
    loc.left = loc.pile.length;
    b.locById[loc.id] = loc;
    b.locs.push(loc);
  }
  for (const c of cfg.characters) {
    const ab = Object.keys(c.ability)[0];
    b.chars[c.identifier] = {
      id: c.identifier, name: c.name || "#" + c.identifier, status: c.status,
      attack: c.attack, search: c.search, ability: ab, abilityArgs: c.ability[ab],
      owner: -1, loc: null, alive: false, dead: false, wounds: 0, frost: 0, equip: [],
    };
  }
  for (const entry of cfg.cards) {
    const type = Object.keys(entry)[0];
    const c = entry[type];
    b.cards[c.identifier] = { id: c.identifier, type, amount: c.amount, location: c.location,
                              holder: -1 };
  }
  for (const entry of cfg.crises) {
    const type = Object.keys(entry)[0];
    const c = entry[type];
    b.crises[c.identifier] = { id: c.identifier, type, moral: c.moralChange,
                               required: c.requiredCards };
  }
  return b;
}

// The board the turns begin with (behaviour.md 3.5), announced by no event.
function setUp(b) {
  const g = b.cfg.goal;
  b.moral = g.moral || 0;
  b.children = g.childrenInColony || 0;
  for (const loc of b.locs) {
    const n = loc.colony ? g.zombiesColony || 0 : g.zombiesLocations || 0;
    for (let z = 0; z < n; z++) loc.zombies[z % loc.entrances]++;
  }
}

const charName = (b, id) => (b.chars[id] ? b.chars[id].name : "character " + id);
const locName = (b, id) => (b.locById[id] ? b.locById[id].name : "location " + id);
const playerName = (b, p) => (b.players[p] ? b.players[p].name : "player " + p);
const cardName = (b, id) => {
  const c = b.cards[id];
  if (!c) return "card " + id;
  const kind = c.type.replace("_", " ");
  return c.type === "food" ? `food ${c.amount} (#${id})` : `${kind} (#${id})`;
};
const colony = (b) => b.locs.find((l) => l.colony);

function player(b, p) {
  if (!b.players[p]) b.players[p] = { id: p, name: "player " + p, hand: [], dice: [], left: false };
  return b.players[p];
}

function removeFromHand(b, cardId) {
  const c = b.cards[cardId];
  if (c && c.holder >= 0 && b.players[c.holder]) {
    const hand = b.players[c.holder].hand;
    const i = hand.indexOf(cardId);
    if (i >= 0) hand.splice(i, 1);
  }
  if (c) c.holder = -1;
  return c;
}

// Character id dies (killed or bitten, behaviour.md 7): it leaves the
// board; a player with no character left loses the hand (a new character
// may spawn for it with the next event).
function die(b, id) {
  const ch = b.chars[id];
  Object.assign(ch, { alive: false, dead: true, loc: null });
  const owner = b.players[ch.owner];
  if (owner && !Object.values(b.chars).some((c) => c.alive && c.owner === ch.owner)) dropHand(b, owner);
}

function dropHand(b, p) {
  for (const id of p.hand) if (b.cards[id]) b.cards[id].holder = -1;
  p.hand = [];
}

function heal(ch) {
  if (ch.frost > 0) ch.frost--;
  else if (ch.wounds > 0) ch.wounds--;
}

// Fold one event into the board; returns its log text (null: not logged).
const fold = {
  Player(b, e) { player(b, e.player).name = e.playerName; return `${e.playerName} is player ${e.player}`; },
  GameStarted(b) { b.started = true; return "The game starts"; },
  RegistrationAborted(b) { b.over = true; b.result = "aborted"; return "The registration was aborted"; },
  CharacterSpawned(b, e) {
    const ch = b.chars[e.characterId];
    Object.assign(ch, { owner: e.player, loc: colony(b).id, alive: true });
    return `${playerName(b, e.player)} brings ${ch.name} into the colony`;
  },
  ZombieSpawned(b, e) { b.locById[e.locationId].zombies[e.entrance]++; return `A zombie at ${locName(b, e.locationId)}, entrance ${e.entrance}`; },
  ChildSpawned(b) { b.children++; return "A child joins the colony"; },
  CardDrawn(b, e) {
    const c = b.cards[e.cardId];
    player(b, e.player).hand.push(e.cardId);
    if (c) {
      c.holder = e.player;
      for (const l of b.locs) if (l.pile.includes(e.cardId)) l.left--;
    }
    return `${playerName(b, e.player)} draws ${cardName(b, e.cardId)}`;
  },
  GameEnd(b, e) { b.over = true; b.result = e.win ? "won" : "lost"; return e.win ? "The colony has won!" : "The colony has lost."; },
  NextRound(b, e) {
    if (b.round === null) setUp(b);
    b.round = e.round; b.colonyPhase = false; b.crisis = null; b.contributed = 0;
    for (const p of b.players) if (p) p.dice = [];
    return b.rules === "revised" ? `Round: ${e.round} left` : `Round ${e.round}`;
  },
  Crisis(b, e) { b.crisis = e.crisisId; return `Crisis: ${crisisText(b, e.crisisId)}`; },
  DieRolled(b, e) { player(b, e.player).dice.push(e.value); return `${playerName(b, e.player)} rolls ${e.value}`; },
  AbilityUsed(b, e) {
    const ch = b.chars[e.characterId];
    if (ch.ability === "feed") b.food += ch.abilityArgs.numFood || 0;
    if (ch.ability === "heal" && "target" in e) heal(b.chars[e.target]);
    if (ch.ability === "barricade" && "target" in e) {
      const l = b.locById[ch.loc];
      const space = 3 - l.zombies[e.target] - l.barricades[e.target];
      l.barricades[e.target] += Math.max(0, Math.min(space, ch.abilityArgs.numBarricades || 0));
    }
    return `${ch.name} uses the ${ch.ability} ability` + ("target" in e ? ` (${e.target})` : "");
  },
  Barricaded(b, e) { b.locById[e.locationId].barricades[e.entrance]++; return `${charName(b, e.characterId)} barricades ${locName(b, e.locationId)}, entrance ${e.entrance}`; },
  Moved(b, e) {
    const ch = b.chars[e.characterId];
    ch.loc = e.locationId;
    // base rules: the owner's FUEL card with the lowest id goes to waste
    const hand = e.fuel && b.players[ch.owner] ? b.players[ch.owner].hand : [];
    const fuel = hand.filter((id) => b.cards[id] && b.cards[id].type === "fuel");
    if (fuel.length) removeFromHand(b, Math.min(...fuel));
    return `${charName(b, e.characterId)} moves to ${locName(b, e.locationId)}` + (e.fuel ? " with fuel" : "");
  },
  Frostbitten(b, e) { b.chars[e.characterId].frost++; return `${charName(b, e.characterId)} is frostbitten`; },
  Wounded(b, e) { b.chars[e.characterId].wounds++; return `${charName(b, e.characterId)} is wounded`; },
  Bitten(b, e) {
    if (!("characterId" in e)) { b.children--; return "A child is bitten and dies"; }
    die(b, e.characterId);
    return `${charName(b, e.characterId)} is bitten and dies`;
  },
  Contributed(b, e) { removeFromHand(b, e.cardId); b.contributed++; return `${playerName(b, e.player)} contributes ${cardName(b, e.cardId)} to the crisis`; },
  CardUsed(b, e) {
    const c = removeFromHand(b, e.cardId);
    if (c && "target" in e && b.rules === "revised") {
      if (c.type === "fuel") b.chars[e.characterId].loc = e.target;
      else if (["hammer", "snow_boots", "colt", "swab", "blueprint"].includes(c.type))
        b.chars[e.target].equip.push(e.cardId);
    }
    if (c && c.type === "medicine" && "target" in e) heal(b.chars[e.target]);
    if (c && c.type === "lock" && "target" in e) b.locById[b.chars[e.characterId].loc].barricades[e.target]++;
    return `${cardName(b, e.cardId)} is used` + ("characterId" in e ? ` by ${charName(b, e.characterId)}` : "");
  },
  FoodChanged(b, e) { b.food += e.amount; return `Food ${e.amount > 0 ? "+" : ""}${e.amount}`; },
  ColonyPhaseStarted(b) { b.colonyPhase = true; for (const p of b.players) if (p) p.dice = []; return "The colony phase"; },
  StarvationTokenAdded(b) { b.starvation++; return "Starvation token"; },
  MoralChanged(b, e) { b.moral += e.amount; return `Morale ${e.amount > 0 ? "+" : ""}${e.amount} (${e.reason.toLowerCase().replace("_", " ")})`; },
  SurvivorKilled(b, e) { die(b, e.characterId); return `${charName(b, e.characterId)} dies`; },
  ChildKilled(b) { b.children--; return "A child dies"; },
  BarricadeDestroyed(b, e) { b.locById[e.locationId].barricades[e.entrance]--; return `A barricade at ${locName(b, e.locationId)} falls`; },
  WasteChanged(b, e) { b.waste = b.rules === "revised" ? b.waste + e.amount : e.amount; return `Waste: ${b.waste}`; },
  ZombieKilled(b, e) { b.locById[e.locationId].zombies[e.entrance]--; return `${charName(b, e.characterId)} kills a zombie at ${locName(b, e.locationId)}`; },
  Searched(b, e) { return `${charName(b, e.characterId)} searches ${locName(b, e.locationId)}`; },
  Left(b, e) { const p = player(b, e.player); p.left = true; dropHand(b, p); return `${playerName(b, e.player)} leaves the game`; },
};

function crisisText(b, id) {
  const c = b.crises[id];
  return c ? `${c.required} ${c.type} cards, or morale -${c.moral}` : "crisis " + id;
}

// ---- the page's state --------------------------------------------------------

const S = {
  info: null,
  mode: null,        // "play", "watch" or "replay"
  cfg: null,
  rules: "base",
  events: [],        // public events folded so far, [{e, text}]
  marks: [],         // replay: events[] index after each journal entry
  step: null,        // time travel: how many events are shown (null: live)
  me: null,          // the seat's "me" event
  secret: localStorage.getItem("sopra.secret"),
  source: null,
  myTurn: false,
  offered: null,
  turn: null,        // the server's "turn" event: {player, deadline} (live only)
  actionsKey: null,  // the legal commands the action buttons show, as JSON
  failed: null,
};

function setStatus(t) { $("status").textContent = t; }

function boardAt(n) {
  const b = newBoard(S.cfg, S.rules);
  for (let i = 0; i < n; i++) fold[S.events[i].e.event](b, S.events[i].e);
  return b;
}

// One protocol line from a stream (or a replay file).
function onLine(line) {
  let e;
  try { e = JSON.parse(line); } catch (_) { return; }
  switch (e.event) {
    case "Config":
      S.cfg = JSON.parse(e.config);
      S.events = [];
      S.live = newBoard(S.cfg, S.rules);
      break;
    case "Session":
      S.secret = e.secret;
      localStorage.setItem("sopra.secret", e.secret);
      break;
    case "ActNow":
      S.myTurn = true;
      break;
    case "Characters":
      S.offered = [e.characterId0, e.characterId1, e.characterId2, e.characterId3];
      break;
    case "CommandFailed":
      S.failed = e.message;
      addLog(e.message, true);
      break;
    default:
      if (!fold[e.event] || !S.cfg) return; // an event this page does not know
      const text = fold[e.event](S.live, e);
      S.events.push({ e, text });
      if (e.event === "GameEnd" || e.event === "RegistrationAborted" ||
          (e.event === "Left" && S.me && e.player === S.me.player)) {
        S.myTurn = false;
        if (S.mode === "play" && e.event !== "Left") localStorage.removeItem("sopra.secret");
      }
  }
  scheduleRender();
}

let renderPending = false;
function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => { renderPending = false; render(); });
}

function addLog(text, failed) {
  const li = document.createElement("li");
  li.textContent = text;
  if (failed) li.className = "failed";
  $("log").append(li);
  $("log").scrollTop = $("log").scrollHeight;
}

// ---- rendering -------------------------------------------------------------------

function el(tag, cls, text) {
  const x = document.createElement(tag);
  if (cls) x.className = cls;
  if (text !== undefined) x.textContent = text;
  return x;
}

function render() {
  if (!S.cfg) return;
  $("lobby").hidden = true;
  $("game").hidden = false;
  const n = S.step === null ? S.events.length : S.step;
  const b = S.step === null ? S.live : boardAt(n);
  renderStats(b);
  renderBoard(b);
  renderPlayers(b);
  renderLog(n);
  renderTime(n);
  renderSeat(b);
}

function stat(label, value, id) {
  const s = el("span", "stat");
  s.id = id;
  s.append(label + " ", el("b", null, String(value)));
  return s;
}

function renderStats(b) {
  const g = S.cfg.goal;
  const goal = g.barricades ? `${g.barricades} barricades` : g.locationWithZombies !== undefined
    ? "clear the zombies" : "survive";
  const crisis = b.crisis === null ? "–" : crisisText(b, b.crisis) + ` (${b.contributed} given)`;
  $("stats").replaceChildren(
    stat("Round", b.round === null ? "–" : b.rules === "revised" ? `${b.round} left` : `${b.round} of ${b.rounds}`, "st-round"),
    stat("Morale", b.moral, "st-morale"), stat("Food", b.food, "st-food"),
    stat("Waste", b.waste, "st-waste"), stat("Starvation", b.starvation, "st-starvation"),
    stat("Children", b.children, "st-children"), stat("Crisis", crisis, "st-crisis"),
    stat("Goal", goal, "st-goal"));
  const mine = S.mode === "play" && S.myTurn && !b.over && S.step === null;
  // a step back: whose turn it is now in the live game
  const past = S.step !== null && S.mode !== "replay" && S.live;
  $("turn").textContent = past ? "Live: " + turnText(S.live, S.turn)
    : turnText(b, S.mode === "replay" ? null : S.turn);
  $("turn").className = mine ? "mine" : "";
  renderCountdown();
}

// Whose turn it is on board b: from the server's "turn" event t (the
// player the game waits for; null in a replay) if there is one, else what
// the board tells.
function turnText(b, t) {
  if (b.over) return b.result === "won" ? "The colony has won!" : b.result === "lost" ? "The colony has lost." : "The registration was aborted.";
  if (t && t.player >= 0) {
    if (S.mode === "play" && S.me && t.player === S.me.player) return "Your turn";
    return `${playerName(b, t.player)}'s turn` + (b.round === null ? " (choosing characters)" : "");
  }
  if ((t && t.player === -1) || !b.started) return "Waiting for players…";
  return b.colonyPhase ? "Colony phase" : "A player is acting";
}

// The seconds left of the --timeout for the live wait (every mode but a
// replay; the server's "turn" event gives them).
function renderCountdown() {
  const t = S.turn;
  const show = t && t.deadline && S.mode !== "replay" && S.live && !S.live.over;
  const left = show ? Math.max(0, Math.round((t.deadline - Date.now()) / 1000)) : 0;
  $("countdown").textContent = show ? `${left} s left` : "";
}

function renderBoard(b) {
  const out = [];
  for (const l of b.locs) {
    const box = el("div", "location" + (l.colony ? " colony" : ""));
    box.dataset.id = l.id;
    box.tabIndex = 0;
    box.append(el("h3", null, l.name + (l.colony ? "" : ` (${l.spaces} spaces)`)));
    const ents = el("div", "entrances");
    for (let i = 0; i < l.entrances; i++) {
      const en = el("span", "entrance");
      en.dataset.entrance = i;
      en.dataset.zombies = l.zombies[i];
      en.dataset.barricades = l.barricades[i];
      en.title = `entrance ${i}: ${l.zombies[i]} zombie(s), ${l.barricades[i]} barricade(s)`;
      en.append(el("span", "n", String(i)), el("span", "zombie", "Z".repeat(l.zombies[i])),
                el("span", "barricade", "#".repeat(l.barricades[i])));
      ents.append(en);
    }
    box.append(ents);
    const people = el("div", "people");
    for (const ch of Object.values(b.chars)) {
      if (!ch.alive || ch.loc !== l.id) continue;
      const c = el("span", "character" + (ch.wounds + ch.frost ? " hurt" : ""),
                   ch.name + (ch.owner >= 0 ? ` (${playerName(b, ch.owner)})` : ""));
      c.dataset.id = ch.id;
      c.tabIndex = 0;
      people.append(c);
    }
    box.append(people);
    box.append(el("div", "pile", l.colony ? `${b.children} children` : `${l.left} cards to search`));
    out.push(box);
  }
  $("board").replaceChildren(...out);
}

function renderPlayers(b) {
  const out = [];
  for (const p of b.players) {
    if (!p) continue;
    const box = el("div", "player" + (p.left ? " left" : ""));
    box.dataset.player = p.id;
    box.append(el("b", null, p.name), " ");
    box.append(el("span", "dice", p.dice.length ? "dice " + p.dice.join(" ") : ""));
    const hand = el("div", "hand");
    for (const id of p.hand) {
      const c = el("span", "card", cardName(b, id));
      c.dataset.card = id;
      c.tabIndex = 0;
      hand.append(c);
    }
    box.append(hand);
    out.push(box);
  }
  $("players").replaceChildren(...out);
}

function renderLog(n) {
  const log = $("log");
  const items = [];
  for (let i = 0; i < n; i++) {
    const li = el("li", null, S.events[i].text);
    li.value = i + 1;
    items.push(li);
  }
  if (S.failed && S.step === null) items.push(el("li", "failed", S.failed));
  log.replaceChildren(...items);
  log.scrollTop = log.scrollHeight;
}

function renderTime(n) {
  const sl = $("slider");
  sl.max = S.events.length;
  sl.value = n;
  const entry = S.marks.length ? ` (after entry ${entryAt(n)})` : "";
  $("step-label").textContent = `${n} of ${S.events.length}${entry}`;
  const rounds = [];
  S.events.forEach((x, i) => { if (x.e.event === "NextRound") rounds.push([x.e.round, i + 1]); });
  const sel = $("round-jump");
  if (sel.options.length !== rounds.length + 1) {
    sel.replaceChildren(el("option", null, "–"), ...rounds.map(([r, i]) => {
      const o = el("option", null, S.rules === "revised" ? `${r} left` : String(r));
      o.value = i;
      return o;
    }));
  }
}

function entryAt(n) {
  let k = 0;
  while (k < S.marks.length && S.marks[k] <= n) k++;
  return k;
}

// What a command does, in the configuration's names.
function label(b, c) {
  const ch = (id) => charName(b, id);
  switch (c.command) {
    case "StartGame": return "Start the game";
    case "SelectCharacters": return `Choose ${ch(c.characterId0)} and ${ch(c.characterId1)}`;
    case "Leave": return "Leave the game";
    case "EndTurn": return "End the turn";
    case "Move": return `${ch(c.characterId)} → ${locName(b, c.locationId)}` + (c.fuel ? " (fuel)" : "");
    case "Search": return `${ch(c.characterId)} searches`;
    case "Attack": return `${ch(c.characterId)} attacks entrance ${c.entrance}`;
    case "Barricade": return `${ch(c.characterId)} barricades entrance ${c.entrance}`;
    case "CleanWaste": return `${ch(c.characterId)} cleans the waste`;
    case "ContributeCard": return `Give ${cardName(b, c.cardId)} to the crisis`;
    case "UseCard": return `Use ${cardName(b, c.cardId)}` + ("characterId" in c ? ` with ${ch(c.characterId)} on ${c.target}` : "");
    case "UseAbility": return `${ch(c.characterId)}: ${b.chars[c.characterId].ability}` + ("target" in c ? ` on ${c.target}` : "");
    default: return c.command;
  }
}

function renderSeat(b) {
  const seat = $("seat");
  seat.hidden = S.mode !== "play";
  if (seat.hidden) return;
  const me = S.me;
  $("me-line").textContent = me ? `You are ${playerName(b, me.player)} (player ${me.player})` : "Joining…";
  const mine = me && b.players[me.player];
  // live: the dice the server reports; a step back: the dice at that step
  const dice = !me ? [] : S.step === null ? me.dice : mine ? mine.dice : [];
  $("dice").replaceChildren(...dice.map((v) => el("span", "die", String(v))));
  const hand = mine ? mine.hand : [];
  $("hand").replaceChildren(...hand.map((id) => {
    const c = el("span", "card", cardName(b, id));
    c.dataset.card = id;
    c.tabIndex = 0;
    return c;
  }));
  const canBot = S.info && S.info.botsLeft > 0 && !b.started && !b.over;
  $("add-bot").hidden = !canBot;
  $("bots-left").textContent = canBot ? `${S.info.botsLeft} bot(s) left` : "";
  renderActions(b);
}

// The legal commands as buttons, grouped by command; only while live.
function renderActions(b) {
  const box = $("actions");
  const legal = S.me && S.step === null && !b.over ? S.me.legal : [];
  // the same buttons stay (a click is not lost to a render in between)
  const shown = JSON.stringify(legal);
  if (shown === S.actionsKey) return;
  S.actionsKey = shown;
  const groups = new Map();
  legal.forEach((c, i) => {
    if (c.command === "SelectCharacters" && c.characterId0 > c.characterId1) return; // one order suffices
    if (!groups.has(c.command)) groups.set(c.command, []);
    groups.get(c.command).push([c, i]);
  });
  const out = [];
  let key = 1;
  for (const [name, list] of groups) {
    const g = el("div", "group");
    g.append(el("span", null, name));
    for (const [c] of list) {
      const btn = el("button", "action", label(b, c));
      btn.type = "button";
      btn.dataset.command = JSON.stringify(c);
      if (key <= 9) btn.setAttribute("aria-keyshortcuts", String(key)), btn.title = `key ${key}`, btn.dataset.key = key++;
      btn.addEventListener("click", () => send(c));
      g.append(btn);
    }
    out.push(g);
  }
  box.replaceChildren(...out);
}

// ---- inspecting ---------------------------------------------------------------------

function inspect(kind, id) {
  const b = S.step === null ? S.live : boardAt(S.step);
  const body = $("inspect-body");
  const lines = [];
  if (kind === "character") {
    const ch = b.chars[id];
    lines.push(ch.name, `status ${ch.status}, attack ${ch.attack}, search ${ch.search}`,
               `ability: ${ch.ability} ${JSON.stringify(ch.abilityArgs)}`,
               ch.alive ? `at ${locName(b, ch.loc)}, wounds ${ch.wounds}, frostbite ${ch.frost}` : ch.dead ? "dead" : "not in play",
               ch.owner >= 0 ? `played by ${playerName(b, ch.owner)}` : "");
    if (ch.equip.length) lines.push("equipment: " + ch.equip.map((c) => cardName(b, c)).join(", "));
  } else if (kind === "card") {
    const c = b.cards[id];
    lines.push(cardName(b, id), `type ${c.type}` + (c.amount ? `, amount ${c.amount}` : "") +
               (c.location !== undefined ? `, builds at ${locName(b, c.location)}` : ""));
  } else if (kind === "location") {
    const l = b.locById[id];
    lines.push(l.name, l.colony ? "the colony" : `${l.spaces} survivor spaces, ${l.left} of ${l.pile.length} cards left`);
    l.zombies.forEach((z, i) => lines.push(`entrance ${i}: ${z} zombie(s), ${l.barricades[i]} barricade(s)`));
  } else if (kind === "crisis" && b.crisis !== null) {
    lines.push("Crisis", crisisText(b, b.crisis), `${b.contributed} card(s) given so far`);
  }
  body.replaceChildren(...lines.filter(Boolean).map((t) => el("p", null, t)));
  $("inspect").hidden = false;
  $("inspect-close").focus();
}

document.addEventListener("click", (ev) => {
  const t = ev.target.closest(".character, .card, .location, #st-crisis");
  if (!t) return;
  if (t.classList.contains("character")) inspect("character", Number(t.dataset.id));
  else if (t.classList.contains("card")) inspect("card", Number(t.dataset.card));
  else if (t.id === "st-crisis") inspect("crisis");
  else inspect("location", Number(t.dataset.id));
});

// Keys: 1-9 the first actions, Enter/Space inspect what has the focus,
// Escape closes the details, arrows step through time, L goes live.
document.addEventListener("keydown", (ev) => {
  if (ev.target.tagName === "INPUT" && ev.target.type !== "range") return;
  if (ev.key === "Escape") { $("inspect").hidden = true; return; }
  if ((ev.key === "Enter" || ev.key === " ") && ev.target.matches(".character, .card, .location")) {
    ev.preventDefault();
    ev.target.click();
    return;
  }
  if (/^[1-9]$/.test(ev.key)) {
    const btn = document.querySelector(`#actions button[data-key="${ev.key}"]`);
    if (btn) btn.click();
  } else if (ev.key === "l" || ev.key === "L") {
    goLive();
  } else if ((ev.key === "ArrowLeft" || ev.key === "ArrowRight") && ev.target.id !== "slider") {
    const n = S.step === null ? S.events.length : S.step;
    setStep(n + (ev.key === "ArrowLeft" ? -1 : 1));
  }
});
$("inspect-close").addEventListener("click", () => { $("inspect").hidden = true; });

// ---- time travel -----------------------------------------------------------------------

function setStep(n) {
  n = Math.max(0, Math.min(S.events.length, n));
  S.step = n >= S.events.length && S.mode !== "replay" ? null : n;
  render();
}
function goLive() { S.step = null; render(); }
$("slider").addEventListener("input", () => setStep(Number($("slider").value)));
$("live").addEventListener("click", goLive);
$("round-jump").addEventListener("change", () => {
  const v = Number($("round-jump").value);
  if (v) setStep(v);
});

// ---- talking to the server ---------------------------------------------------------

async function send(c) {
  S.failed = null;
  S.myTurn = false;
  const r = await fetch("/api/command", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Sopra-Secret": S.secret || "" },
    body: JSON.stringify(c),
  });
  if (!r.ok) {
    const e = await r.json().catch(() => ({ error: r.statusText }));
    S.failed = e.error;
    render();
  }
}

function openStream(url, mode) {
  if (S.source) S.source.close();
  S.mode = mode;
  const es = new EventSource(url);
  S.source = es;
  es.onopen = () => setStatus(mode === "play" ? "playing" : "watching");
  es.onmessage = (m) => onLine(m.data);
  es.addEventListener("turn", (m) => {
    const t = JSON.parse(m.data);
    S.turn = { player: t.player, deadline: t.msLeft >= 0 ? Date.now() + t.msLeft : 0 };
    scheduleRender();
  });
  es.addEventListener("me", (m) => {
    S.me = JSON.parse(m.data);
    S.myTurn = S.me.yourTurn;
    scheduleRender();
  });
  es.onerror = () => {
    // the stream ended: the game is over, the server is gone, or the
    // network dropped; a seat comes back with its secret
    es.close();
    const over = S.live && S.live.over;
    setStatus(over ? "the game is over" : "disconnected");
    if (!over && mode === "play" && S.secret) setTimeout(() => play(null), 2000);
    else if (!over && mode === "watch") setTimeout(() => openStream("/api/watch", "watch"), 2000);
  };
}

function play(name) {
  S.me = null;
  if (name !== null) openStream("/api/play?name=" + encodeURIComponent(name), "play");
  else openStream("/api/play?secret=" + encodeURIComponent(S.secret), "play");
}

$("join-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  localStorage.removeItem("sopra.secret");
  S.secret = null;
  play($("name").value);
});
$("watch").addEventListener("click", () => openStream("/api/watch", "watch"));
$("add-bot").addEventListener("click", async () => {
  const r = await fetch("/api/bots", { method: "POST" });
  const j = await r.json().catch(() => ({}));
  if (r.ok) { S.info.botsLeft = j.botsLeft; addLog(`${j.started} joins`); } else S.failed = j.error;
  render();
});

// A replay file: what `sopra-replay --watch JOURNAL` prints -- the lines a
// watcher got, each journal entry's lines after an {"entry":N} line.
$("replay-file").addEventListener("change", async () => {
  const f = $("replay-file").files[0];
  if (!f) return;
  if (S.source) S.source.close();
  S.mode = "replay";
  S.marks = [];
  for (const line of (await f.text()).split("\n")) {
    if (!line.trim()) continue;
    if (line.startsWith('{"entry":')) { S.marks.push(S.events.length); continue; }
    onLine(line);
  }
  S.step = 0;
  setStatus("replaying " + f.name);
  render();
});

async function start() {
  try {
    S.info = await (await fetch("/api/info")).json();
    S.rules = S.info.rules;
    setStatus(S.info.over ? "the game is over" : S.info.registration ? "open for players" : "a game is running");
    $("lobby-info").textContent = `${S.info.players} of ${S.info.maxPlayers} players, ${S.info.rules} rules`;
  } catch (_) {
    setStatus("no server: replay a file");
  }
  if (S.secret && S.info && !S.info.over) play(null);
  const params = new URLSearchParams(location.search);
  if (params.has("watch")) openStream("/api/watch", "watch");
}
setInterval(renderCountdown, 500);
start();
