// kelime's page: asks the JSON API (same origin, relative URLs) and keeps the question in
// the URL (?w=kitap+evler, ?rack=kale%3F%5Blm%5D&game=kelimatik) so a result can be shared.
// Everything shown from a reply goes in through textContent / setAttribute, never as HTML.
"use strict";

(() => {
  // Every sentence a player reads, in Turkish ("tr") and Kurmanji ("ku"): static/messages.json
  // (the server's error codes and verdict reasons, each mapped to a sentence; the interface
  // text, whose Turkish is index.html's too). The page speaks Kurmanji when the lexicon is.
  let messages = null, lang = "tr";
  const M = () => messages[lang];
  // A template with its {names} filled; a bracket whose value is missing is left out.
  function fill(template, values) {
    const has = (name) => values && values[name] !== undefined && values[name] !== null;
    return template.replace(/\s*\([^()]*\{(\w+)\}[^()]*\)/g, (group, name) => (has(name) ? group : ""))
      .replace(/\{(\w+)\}/g, (_, name) => (has(name) ? (typeof values[name] === "number"
        ? count(values[name]) : String(values[name])) : "…"));
  }
  const t = (key, values) => fill(M().text[key] || "", values);
  const ui = (key) => M().ui[key];
  // A lexicon's language, by its letters (GET /v1/lexicons gives each one's alphabet).
  const LANGUAGES = {"abcçdefgğhıijklmnoöprsştuüvyz": "tr", "abcçdeêfghiîjklmnopqrsştuûvwxyz": "ku"};
  // Each a rack its game deals: Kelimatik's 10 tiles are 5 consonants, 3 vowels, a two-letter
  // tile and a joker; a Harfbank hand 14 tiles, or 15 with the one drawn to throw away.
  const EXAMPLES = {tr: ["kalem?", "kelimats?[lm]", "kalemkitap?ilgi"], ku: ["mêr?n", "mêrxweşî?[an]"]};
  // POST /v1/reports: what a player may say is wrong with a verdict (kelime.reports.KINDS)
  const REPORT_KINDS = [
    ["missing", "report_missing", "missing: a real word the game refuses"],
    ["wrong", "report_wrong",
     "wrong: the game accepts it, but it is not a word or misspelt"],
    ["offensive", "report_offensive",
     "offensive: an insult or obscenity the game accepts"],
  ];
  const NOTE_CHARS = 500;        // a report's note (KELIME_MAX_NOTE_CHARS' default)
  const DETAILS_FOR = 20;        // GET /v1/words (hooks, TDK entries) for the first 20 words
  const PATTERN_SQUARES = 15;    // a board row: KELIME_MAX_PATTERN_LENGTH's default
  const SHOWN = 200;             // the filtered words shown, best first
  const numbers = new Intl.NumberFormat("tr-TR");
  const $ = (id) => document.getElementById(id);
  const form = $("soru"), wordsInput = $("w"), rackInput = $("rack"), gameSelect = $("game");
  const lexSelect = $("lex");
  const FILTERS = ["starts", "ends", "contains"];   // letters on the board: anagram patterns
  const wordsOut = $("words-out"), rackOut = $("rack-out");
  // What a screen reader announces (role=status): the summary of an answer, not all of it.
  const announce = (section, text) => { $(`${section}-status`).textContent = text; };
  let games = {}, defaultGame = "kelimelik";
  let lexicons = {}, defaultLexicon = "", lexiconsFailed = null;
  let reportsTaken = false;   // GET v1/reports is 405 (the POST route is there), else 404
  const last = {words: null, rack: null};             // the question each section shows
  const running = {words: null, rack: null, board: null};  // its AbortController

  // ---- DOM helpers ------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));  // a string becomes text
    }
    return node;
  }
  const en = (text) => el("span", {lang: "en", class: "en"}, text);
  const status = (text, english) => el("p", {class: "status"}, text, english ? [" ", en(english)] : null);
  // What went wrong, as a sentence for the player; the server's own words (English, for
  // whoever maintains it) stay folded away under "Ayrıntı".
  const errorBox = (err) => el("p", {class: "error", role: "alert", "data-code": err.code || ""},
    `${t("error")}: `, errorSentence(err), " ", technical(err));
  const technical = (err) => el("details", {class: "technical"}, el("summary", {}, t("detail")),
    el("span", {lang: "en"}, err.message || "", err.code ? ` (${err.code})` : ""));
  function errorSentence(err) {
    const errors = M().errors;
    const d = (err.details && typeof err.details === "object") ? err.details : {};
    if (err.code === "invalid_rack") {
      if (d.tiles !== undefined && d.most !== undefined) {
        return fill(errors.invalid_rack_tiles, {...d, over: d.tiles - d.most,  // "(15 taşa kadar)":
                                                most: d.most === d.rack_size ? null : d.most});  // Harfbank's
      }
      if (d.game_blanks !== undefined) return fill(errors.invalid_rack_blanks, d);
      if (d.tile && d.position === undefined) return fill(errors.invalid_rack_two_letter, d);
      if (d.character) return fill(errors.invalid_rack_character, d);
      if (d.position !== undefined) return fill(errors.invalid_rack_position, d);
    }
    if (err.code === "rack_not_dealt") {  // details: game, rule, least, most, found (letter)
      const game = games[d.game] || games[gameSelect.value];
      const values = {...d, game: gameName(d.game || gameSelect.value),
                      want: d.least === d.most ? d.most : t("at_most", {n: d.most})};
      if (d.rule === "tiles") {  // how many to take out or add, when the figures say
        if (d.found > d.most) return fill(errors.rack_not_dealt_over, {...values, over: d.found - d.most});
        if (d.found < d.least) return fill(errors.rack_not_dealt_under, {...values, under: d.least - d.found});
        return fill(errors.rack_not_dealt_tiles, values);
      }
      if (d.rule === "letter") return fill(errors.rack_not_dealt_letter, values);
      if (M().text[`kind_${d.rule}`]) return fill(errors.rack_not_dealt_kind, {...values, kind: t(`kind_${d.rule}`)});
      return fill(errors.rack_not_dealt, {makeup: makeup(game)});
    }
    if (err.code === "invalid_board" && d.row !== undefined && d.col !== undefined) {  // a cell
      return fill(errors.invalid_board_cell, {row: d.row + 1, col: d.col + 1});
    }
    if (err.code === "invalid_board" && d.game) return fill(errors.invalid_board_game, {game: gameName(d.game)});
    if (err.code === "over_limit" && d.rack_size !== undefined) return fill(errors.over_limit_rack, d);  // moves' rack
    if (err.code === "game_not_for_lexicon") {
      return fill(errors.game_not_for_lexicon, {games: (d.games || []).map(gameName).join(", ") || null});
    }
    return fill(errors[err.code] || errors.other, d);
  }
  // What a game deals: its hand's makeup where the rules give one, else its size.
  function makeup(game) {
    if (!game) return "";
    const c = game.composition;
    return c ? t("makeup", c) : t("makeup_hand", {n: game.rack_size + (game.discard || 0)});
  }
  const gameName = (name) => (games[name] && games[name].title) || name;
  const count = (n) => numbers.format(n);
  function pageLink(params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
    return location.pathname + "?" + q.toString();
  }

  // ---- the API ----------------------------------------------------------------------
  class ApiError extends Error {
    constructor(message, code, status, retryAfter, details) {
      super(message);
      this.code = code; this.status = status; this.retryAfter = retryAfter; this.details = details;
    }
  }
  async function api(path, body, signal) {
    const init = {signal, headers: {Accept: "application/json"}};
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let reply;
    try {
      reply = await fetch(path, init);
    } catch (e) {
      if (e.name === "AbortError") throw e;
      throw new ApiError("could not reach the server", "network");
    }
    let data = null;
    try { data = await reply.json(); } catch (e) { data = null; }
    if (!reply.ok) {
      const error = data && data.error;
      throw new ApiError(error && error.message ? error.message : `HTTP ${reply.status}`,
                         error && error.code ? error.code : null, reply.status,
                         reply.headers.get("Retry-After"), error && error.details);
    }
    return data;
  }
  function restart(section) {
    if (running[section]) running[section].abort();
    running[section] = new AbortController();
    return running[section].signal;
  }
  const aborted = (e) => e && e.name === "AbortError";

  // ---- state in the URL ------------------------------------------------------------------
  function readURL() {
    const q = new URLSearchParams(location.search);
    return {w: q.get("w") || "", rack: q.get("rack") || "", game: q.get("game") || "",
            lex: q.get("lex") || "", board: q.get("board") || "",
            ...Object.fromEntries(FILTERS.map((f) => [f, q.get(f) || ""]))};
  }
  function state() {
    return {w: wordsInput.value.trim(), rack: rackInput.value.trim(), game: gameSelect.value,
            lex: lexSelect.value, board: boardParam(),
            ...Object.fromEntries(FILTERS.map((f) => [f, $(f).value.trim()]))};
  }
  function writeURL(s) {
    const q = new URLSearchParams();
    if (s.w) q.set("w", s.w);
    if (s.rack) q.set("rack", s.rack);
    for (const f of FILTERS) if (s[f]) q.set(f, s[f]);
    if (s.game && s.game !== defaultGame) q.set("game", s.game);
    if (s.lex && s.lex !== defaultLexicon) q.set("lex", s.lex);
    if (s.board) q.set("board", s.board);
    const query = q.toString();
    history.replaceState(null, "", location.pathname + (query ? "?" + query : ""));
  }
  function splitWords(text) {
    const parts = text.includes(",") ? text.split(",") : text.split(/\s+/);
    return parts.map((w) => w.trim().replace(/\s+/g, " ")).filter(Boolean);
  }

  // ---- words -----------------------------------------------------------------------
  function reasonText(reason) {
    return M().reasons[reason] || M().reasons.other;
  }
  // `asked`: the lexicon and game the verdict came from, which a report of it names too.
  function verdictItem(result, asked) {
    const valid = result.valid === true;
    const reason = result.reason || "";
    const opener = reportsTaken ? el("button", {type: "button", class: "report-open",
                                                "aria-expanded": "false"},
      t("report"), el("span", {class: "sr"}, ` (${result.word})`), " ", en("report this word")) : null;
    const head = el("div", {class: "verdict-head"},
      el("span", {class: "mark", "aria-hidden": "true"}, valid ? "✓" : "✗"),
      el("span", {class: "word"}, result.word),
      result.normalized && result.normalized !== result.word
        ? el("span", {class: "normal"}, "→ ", result.normalized) : null,
      el("span", {class: "state"}, valid ? t("valid") : t("invalid")),
      valid ? null : el("span", {class: "reason"}, reasonText(reason)),
      opener);
    // The report's outcome is announced from here (a live region there before it is filled).
    const outcome = el("p", {class: "report-outcome", "aria-live": "polite"});
    const item = el("li", {class: "verdict", "data-word": result.word, "data-valid": String(valid),
                           "data-reason": reason}, head, outcome, el("div", {class: "details"}));
    if (opener) opener.addEventListener("click", () => toggleReport(item, opener, outcome, result, asked));
    return item;
  }

  // ---- reporting a verdict (POST /v1/reports) ---------------------------------------
  // The button shows when the server takes reports: GET v1/reports is 405 there (the route
  // is POST only) and 404 on a server without a report store.
  let reports = 0;                                     // for the forms' element ids
  function toggleReport(item, opener, outcome, result, asked) {
    const open = item.querySelector(".report");
    if (open) { open.dismiss(); return; }
    outcome.replaceChildren();
    outcome.className = "report-outcome";
    const panel = reportForm(result, asked, outcome, () => {
      panel.remove();
      opener.setAttribute("aria-expanded", "false");
      opener.focus();
    });
    opener.setAttribute("aria-controls", panel.id);
    opener.setAttribute("aria-expanded", "true");
    item.insertBefore(panel, outcome);
    panel.querySelector("input:checked").focus();
  }
  function reportForm(result, asked, outcome, close) {
    const n = ++reports;
    const id = (part) => `report-${n}-${part}`;
    const chosen = result.valid === true ? "wrong" : "missing";  // the claim a verdict invites
    const kinds = REPORT_KINDS.map(([kind, text, english]) => el("div", {class: "choice"},
      el("input", {type: "radio", name: id("kind"), id: id(kind), value: kind,
                   checked: kind === chosen}),
      el("label", {for: id(kind)}, t(text), " ", en(english))));
    const note = el("textarea", {id: id("note"), rows: 3, maxlength: NOTE_CHARS,
                                 "aria-describedby": id("note-hint")});
    const send = el("button", {type: "button", class: "report-send"}, `${t("report_send")} `, en("send"));
    const cancel = el("button", {type: "button", class: "report-cancel"}, `${t("report_cancel")} `, en("cancel"));
    const panel = el("div", {class: "report", id: id("form"), role: "group",
                             "aria-labelledby": id("title")},
      el("fieldset", {},
        el("legend", {id: id("title")}, `${t("report_title")} `, el("q", {}, result.word), " ",
           en("report this word: what is wrong with the verdict?")),
        kinds),
      el("label", {for: id("note")}, `${t("report_note")} `, en("note, optional")), note,
      el("p", {class: "hint", id: id("note-hint")},
         `${t("report_note_hint", {n: NOTE_CHARS})} `,
         en(`Optional, up to ${NOTE_CHARS} characters, kept as plain text.`)),
      el("div", {class: "report-buttons"}, send, cancel));
    panel.dismiss = close;
    cancel.addEventListener("click", close);
    panel.addEventListener("keydown", (event) => {
      if (event.key === "Escape") { event.preventDefault(); close(); }
      // Enter on a radio would submit the page's form (the words' question) instead
      else if (event.key === "Enter" && event.target.tagName === "INPUT") event.preventDefault();
    });
    let sending = false;
    send.addEventListener("click", async () => {
      if (sending) return;
      sending = true;
      send.setAttribute("aria-disabled", "true");
      panel.setAttribute("aria-busy", "true");
      outcome.className = "report-outcome";
      outcome.replaceChildren(`${t("report_sending")} `, en("sending…"));
      const body = {word: result.word, kind: panel.querySelector("input:checked").value,
                    game: asked.game, note: note.value.trim() ? note.value : null};
      if (asked.lexicon) body.lexicon = asked.lexicon;
      try {
        const reply = await api("v1/reports", body);
        outcome.className = "report-outcome done";
        outcome.replaceChildren(`${t("report_thanks", {id: String(reply.id), n: reply.count})} `,
          en(`thank you: report #${reply.id} (reported ${reply.count} ${reply.count === 1 ? "time" : "times"})`));
        close();
      } catch (e) {
        outcome.className = "report-outcome failed";
        outcome.replaceChildren(...reportFailure(e));
        if (e.status === 404 && (!e.code || e.code === "not_found")) close();
      } finally {
        sending = false;
        send.removeAttribute("aria-disabled");
        panel.removeAttribute("aria-busy");
      }
    });
    return panel;
  }
  function reportFailure(e) {
    if (e.status === 404 && (!e.code || e.code === "not_found")) {
      return [`${t("report_none")} `, en("This server does not collect reports.")];
    }
    if (e.status === 429) {
      const seconds = /^\d+$/.test(e.retryAfter || "") ? Number(e.retryAfter) : 0;
      const minutes = Math.max(1, Math.ceil(seconds / 60));
      return seconds
        ? [`${t("report_later_minutes", {n: minutes})} `,
           en(`Too many reports: try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`)]
        : [`${t("report_later")} `, en("Too many reports: try again later.")];
    }
    if (e.code === "reports_full" || e.code === "reports_unavailable" || e.code === "busy") {
      return [`${t("report_unavailable")} `,
              en("Reports cannot be taken right now: send it again later.")];
    }
    return [`${t("report_failed")} `, errorSentence(e), " ", technical(e)];
  }
  function letters(label, english, list) {
    if (!list || !list.length) return null;
    return el("p", {}, el("span", {class: "label"}, label), " ", en(english), ": ",
              el("ul", {class: "chips"}, list.map((x) => el("li", {}, x))));
  }
  function entriesBlock(entries) {
    return el("div", {class: "tdk"},
      el("p", {class: "label"}, "TDK Güncel Türkçe Sözlük ", en("(definitions)")),
      entries.map((entry) => {
        const senses = entry.anlamlarListe || [];
        const sayings = (entry.atasozu || []).map((a) => a.madde).filter(Boolean);
        return el("div", {class: "entry"},
          el("p", {}, el("span", {class: "madde"}, entry.madde || ""),
             entry.telaffuz ? ` /${entry.telaffuz}/` : null,
             entry.lisan ? el("span", {class: "author"}, ` (${entry.lisan})`) : null),
          senses.length ? el("ol", {}, senses.map((sense) => el("li", {},
            (sense.ozelliklerListe || []).length
              ? el("span", {class: "tags"}, sense.ozelliklerListe.map((t) => t.tam_adi).join(", "))
              : null,
            sense.anlam || "",
            (sense.orneklerListe || []).map((ex) => [" ", el("q", {}, ex.ornek || ""),
              ex.yazar && ex.yazar[0] ? el("span", {class: "author"}, ` (${ex.yazar[0].tam_adi.trim()})`) : null])))) : null,
          sayings.length ? el("p", {}, el("span", {class: "label"}, "Atasözleri, deyimler: "),
                                el("ul", {class: "chips"}, sayings.map((s) => el("li", {}, s)))) : null);
      }));
  }
  function detailsBlock(info, game) {
    const parts = [];
    const suggestions = Array.isArray(info.suggestions) ? info.suggestions : null;
    if (suggestions && suggestions.length) {
      parts.push(el("p", {}, el("span", {class: "label"}, t("suggestions")), " ", en("suggestions"), ": ",
        el("ul", {class: "chips"}, suggestions.map((s) => {
          const word = typeof s === "string" ? s : (s && s.word) || "";
          return el("li", {}, el("a", {href: pageLink({w: word, game: game !== defaultGame && game}),
                                        "data-suggestion": word}, word));
        }))));
    }
    if (info.hooks) {
      parts.push(letters(t("front_hooks"), "front hooks", info.hooks.front));
      parts.push(letters(t("back_hooks"), "back hooks", info.hooks.back));
    }
    if (info.entries && info.entries.length) parts.push(entriesBlock(info.entries));
    else if (info.cache) parts.push(el("p", {class: "hint"}, t("no_tdk"), " ",
                                       en("No TDK definition for this word.")));
    return parts;
  }
  // Runs `ask` for one section unless it already shows this question; the section's box is
  // aria-busy while it runs, and a newer question aborts an older one.
  async function runSection(section, out, key, ask) {
    if (last[section] === key) return;
    last[section] = key;
    const signal = restart(section);
    out.setAttribute("aria-busy", "true");
    try {
      await ask(signal);
    } finally {
      if (!signal.aborted) out.removeAttribute("aria-busy");
    }
  }
  const runWords = (text, game) => runSection("words", wordsOut,
    JSON.stringify([text, game, lexSelect.value, lang]), (signal) => askWords(text, game, signal));
  const runRack = (s) => runSection("rack", rackOut,
    JSON.stringify([s.rack, s.game, s.lex, lang, s.whatIf, ...FILTERS.map((f) => s[f])]),
    (signal) => askRack(s, signal));

  async function askWords(text, game, signal) {
    const words = splitWords(text);
    if (!words.length) { wordsOut.replaceChildren(); announce("words", ""); return; }
    wordsOut.replaceChildren(status(t("checking"), "checking…"));
    let reply;
    try {
      // The first DETAILS_FOR words get their suggestions from GET /v1/words below; only
      // a longer list asks the (slower) validate with "suggest", for the words past them,
      // and asks again without it when the server takes fewer (KELIME_MAX_SUGGEST_WORDS).
      const suggest = words.length > DETAILS_FOR;
      const lexicon = lexSelect.value || undefined;
      reply = await api("v1/validate", {words, game, lexicon, suggest}, signal).catch((e) => {
        if (suggest && e.code === "too_many_words") return api("v1/validate", {words, game, lexicon}, signal);
        throw e;
      });
    } catch (e) {
      if (!aborted(e)) { wordsOut.replaceChildren(errorBox(e)); last.words = null; }
      return;
    }
    const valid = reply.results.filter((r) => r.valid).length;
    const summary = reply.all_valid ? t("all_valid") : t("some_valid", {n: reply.results.length, valid});
    announce("words", summary);
    const source = {lexicon: reply.lexicon && reply.lexicon.name, game};
    const items = reply.results.map((r) => verdictItem(r, source));
    reply.results.forEach((r, i) => {  // the words past DETAILS_FOR get their suggestions here
      if (i >= DETAILS_FOR && r.suggestions && r.suggestions.length) {
        items[i].querySelector(".details").replaceChildren(...detailsBlock(r, game));
      }
    });
    wordsOut.replaceChildren(
      el("p", {class: "summary"}, summary, " ", en(reply.all_valid ? "all valid" : `${valid} of ${reply.results.length} valid`)),
      el("ul", {class: "verdicts", id: "verdicts"}, items),
      el("p", {class: "lexicon-line"}, t("lexicon_line", {name: reply.lexicon.name,
        version: reply.lexicon.version, words: reply.lexicon.words, game: gameName(game)})));
    // Details (hooks, TDK entries, suggestions), one GET a word, for the first DETAILS_FOR.
    const asked = reply.results.slice(0, DETAILS_FOR);
    await Promise.all(asked.map((r, i) => /^\.{1,2}$/.test(r.word) ? null :  // a dot segment
      api(`v1/words/${encodeURIComponent(r.word)}?game=${encodeURIComponent(game)}` +
          (lexSelect.value ? `&lexicon=${encodeURIComponent(lexSelect.value)}` : ""), undefined, signal)
        .then((info) => {
          items[i].querySelector(".details").replaceChildren(...detailsBlock(info, game).filter(Boolean));
          return info;
        })
        .catch((e) => (aborted(e) ? null : {failed: e}))));
  }

  // ---- rack ------------------------------------------------------------------------
  // A tile's value in `game` (a blank's is the game's blank value; a two-letter tile's its own).
  function tileValue(tile, game) {
    if (!game) return null;
    if (tile.startsWith("?")) return game.blank_value || 0;
    if (tile.length > 1) {
      const pairs = game.two_letter_tiles || {};
      return (pairs.values || {})[tile] ?? pairs.default_value ?? null;
    }
    return (game.letter_values || {})[tile] ?? null;
  }
  function tile(face, value, kind) {
    return el("span", {class: "tile" + (kind ? ` ${kind}` : "")}, face,
              value === null || value === undefined ? null : el("sub", {class: "value"}, String(value)));
  }
  // `squares`: the pattern the word was found on (its letters are on the board, not tiles).
  function tiles(list, game, squares) {
    const spoken = list.map((x) => (x.startsWith("?") ? `${t("joker")} ${x.slice(1)}` : x)).join(", ");
    let at = 0;
    return [el("span", {class: "tiles", "aria-hidden": "true"}, list.map((x) => {
              const board = squares && x.length === 1 && squares[at] !== ".";
              at += x.startsWith("?") ? 1 : x.length;
              if (board) return tile(x, null, "board");
              return x.startsWith("?") ? tile(x.slice(1) || "?", tileValue(x, game), "blank")
                                       : tile(x, tileValue(x, game));
            })),
            el("span", {class: "sr"}, ` ${t("tiles")}: ${spoken}`)];
  }
  function rackWord(item, rack, game) {
    return el("li", {"data-word": item.word, "data-score": item.score},
      el("a", {class: "word", href: pageLink({w: item.word, rack, game: game !== defaultGame && game}),
               title: t("check_word")}, item.word),
      tiles(item.tiles || [], games[game], item.squares),
      item.score === undefined ? null : el("span", {class: "score"}, t("points", {n: item.score})));
  }
  function anagramBlock(reply, rack, game) {
    if (!reply.words.length) return [status(t("no_words"), "no words from these tiles")];
    const groups = new Map();
    for (const item of reply.words) {
      const n = Array.from(item.word).length;
      if (!groups.has(n)) groups.set(n, []);
      groups.get(n).push(item);
    }
    const lengths = [...groups.keys()].sort((a, b) => b - a);
    const shown = reply.words.length;
    return [
      el("p", {class: "summary"}, t("n_words", {n: reply.count}),
         reply.truncated ? t("first_shown", {shown}) : "", " ",
         en(reply.truncated ? `${reply.count} words, the first ${shown} shown` : `${reply.count} words`)),
      el("div", {id: "anagram-results"}, lengths.map((n) => {
        const items = groups.get(n);
        return el("section", {class: "length-group", "aria-label": t("n_letter_words", {n})},
          el("h3", {}, `${t("n_letters", {n})} `, el("span", {class: "count"}, `(${count(items.length)})`)),
          el("ul", {class: "words"}, items.map((item) => rackWord(item, rack, game))));
      })),
    ];
  }
  function splitBlock(reply, rack, game) {
    const verdict = reply.found
      ? el("p", {class: "verdict-line ok"}, t("laid_whole"), " ", en("laid out whole"))
      : el("p", {class: "verdict-line no"}, t("not_laid_whole"), " ", en("not laid out whole"));
    const facts = [];
    const profile = games[game];
    if (reply.thrown) facts.push(el("p", {}, el("span", {class: "label"}, `${t("thrown")} `),
      tile(reply.thrown, tileValue(reply.thrown === "?" ? "?" : reply.thrown, profile),
           reply.thrown === "?" ? "blank" : null)));
    if ((reply.others_penalty_multiplier || 1) > 1)
      facts.push(el("p", {class: "joker-finish"}, el("span", {class: "label"}, `${t("joker_finish_line")} `),
                    `${t("others_penalty", {n: reply.others_penalty_multiplier})} `,
                    en(`the others' penalty ×${reply.others_penalty_multiplier}`)));
    const left = reply.discarded || [];
    if (left.length) facts.push(el("p", {}, el("span", {class: "label"}, `${t("left_over")} `),
                                   left.map((x) => [tile(x, tileValue(x, profile)), " "])));
    facts.push(el("p", {}, el("span", {class: "label"}, `${t("penalty")} `), t("points", {n: reply.penalty})));
    if (!reply.complete) facts.push(el("p", {class: "hint"}, t("out_of_time"), " ",
                                       en("The search ran out of time; a better layout may exist.")));
    return el("section", {class: "split", id: "split-results", "aria-labelledby": "split-h"},
      el("h3", {id: "split-h"}, t("split_h"), " ", en("Harfbank split")), verdict,
      reply.words.length ? el("ul", {class: "words"}, reply.words.map((item) => rackWord(item, rack, game))) : null,
      facts);
  }
  // The board slots (anagram patterns) the filters describe: the letters on the board
  // (starts + contains somewhere in the middle + ends) with 1 to `free` squares for the rack,
  // no longer than `longest`. Empty when no filter is set.
  function slots(s, free, longest, shortest) {
    const clean = (x) => x.toLocaleLowerCase(lang === "ku" ? "ku" : "tr").replace(/[^\p{L}]/gu, "");
    const [starts, ends, contains] = FILTERS.map((f) => clean(s[f]));
    if (!starts && !ends && !contains) return [];
    const found = new Set();
    for (let k = 1; k <= free; k++) {
      const middles = contains ? Array.from({length: k + 1}, (_, i) => ".".repeat(i) + contains + ".".repeat(k - i))
                               : [".".repeat(k)];
      for (const middle of middles) {
        const slot = starts + middle + ends;
        if (slot.length <= longest && slot.length >= shortest) found.add(slot);
      }
    }
    return [...found];
  }
  // One anagram question a slot, a few at a time; their words merged (each word its best
  // score, the board letters marked), best first.
  async function filtered(s, patterns, lexicon, signal) {
    const words = new Map();
    let truncated = false, reply = null, next = 0;
    async function worker() {
      while (next < patterns.length) {
        const pattern = patterns[next++];
        reply = await api("v1/anagram", {rack: s.rack, game: s.game, lexicon, pattern, ...asked(s)}, signal);
        truncated = truncated || reply.truncated;
        for (const item of reply.words) {
          const had = words.get(item.word);
          if (!had || item.score > had.score) words.set(item.word, {...item, squares: pattern});
        }
      }
    }
    await Promise.all([worker(), worker(), worker()]);
    const sorted = [...words.values()].sort((a, b) => b.score - a.score || a.word.localeCompare(b.word, "tr"));
    return {lexicon: reply.lexicon, count: sorted.length, truncated: truncated || sorted.length > SHOWN,
            words: sorted.slice(0, SHOWN)};
  }
  // A rack the game cannot deal may still be asked about, on purpose: "what_if": true.
  const asked = (s) => (s.whatIf ? {what_if: true} : {});
  function whatIfButton(error, s, again = () => runRack({...state(), whatIf: true})) {
    if (!error || error.code !== "rack_not_dealt" || s.whatIf) return null;
    const button = el("button", {type: "button", class: "what-if-go"}, t("what_if"), " ",
                      el("span", {class: "hint"}, t("what_if_hint")));
    button.addEventListener("click", again);
    return button;
  }
  const whatIfShown = () => el("p", {class: "status what-if"}, t("what_if_shown"), " ",
                               en("tiles this game does not deal: what if"));
  async function askRack(s, signal) {
    const {rack, game} = s;
    if (!rack) {  // an emptied rack says so, rather than clearing its answer without a word
      const had = Boolean(rackOut.textContent);
      rackOut.replaceChildren(had ? el("p", {class: "status empty"}, t("rack_emptied"), " ",
                                       en("The rack is empty: type tiles to find words.")) : "");
      announce("rack", had ? t("rack_emptied") : "");
      return;
    }
    rackOut.replaceChildren(status(t("searching"), "searching…"));
    const profile = games[game] || {};
    const letters = rack.replace(/[\[\]\s]/g, "").length;
    const patterns = slots(s, letters, PATTERN_SQUARES, profile.min_length || 2);
    const filtering = FILTERS.some((f) => s[f]);
    const splitting = Boolean(profile.discard) && !filtering;  // Harfbank's split
    const lexicon = lexSelect.value || undefined;
    const [anagram, split] = await Promise.allSettled([
      filtering ? filtered(s, patterns, lexicon, signal) : api("v1/anagram", {rack, game, lexicon, ...asked(s)}, signal),
      splitting ? api("v1/split", {rack, game, lexicon, ...asked(s)}, signal) : Promise.resolve(null)]);
    if (signal.aborted) return;
    const parts = s.whatIf ? [whatIfShown()] : [];
    if (splitting) {  // Harfbank's own question first: can the hand be laid out whole?
      if (split.status === "fulfilled") parts.push(splitBlock(split.value, rack, game));
      else if (anagram.status === "fulfilled") parts.push(errorBox(split.reason));
    }
    if (anagram.status === "fulfilled" && anagram.value.lexicon) parts.push(...anagramBlock(anagram.value, rack, game));
    else if (anagram.status === "fulfilled") parts.push(status(t("no_words"), "no words from these tiles"));
    else parts.push(errorBox(anagram.reason), whatIfButton(anagram.reason, s));
    announce("rack", anagram.status === "fulfilled" ? t("n_words", {n: anagram.value.count}) : "");
    if (anagram.status === "fulfilled" && anagram.value.lexicon) {
      const lex = anagram.value.lexicon;
      parts.push(el("p", {class: "lexicon-line"}, t("rack_lexicon_line", {name: lex.name,
        version: lex.version, game: gameName(game)})));
    } else {
      last.rack = null;
    }
    rackOut.replaceChildren(...parts);
  }

  // ---- the board (Kelimelik, Sözce): a position to fill in or paste, the best moves drawn --
  // POST /v1/moves with the board, the rack above and the game; the moves listed best first,
  // the chosen one (the first, or the one clicked) drawn on the board, its new tiles marked.
  // A cell is "" (empty), a letter, or "?" and a letter (a blank standing for that letter),
  // as the API's board is. The text form, the CLI's too: one line a row, "." an empty square,
  // a lowercase letter a tile, an uppercase letter (Turkish casing: İ for i, I for ı) a blank.
  const MOVES_SHOWN = 20;        // /v1/moves' default limit
  const boardBox = $("board"), boardOut = $("board-out");
  let cells = [], squares = [], boardGame = null, shownMoves = [];
  // The squares the player typed with "Yeni taşlarım" ticked ("row,col"): the play to check.
  const fresh = new Set();
  const locale = () => (lang === "ku" ? "ku" : "tr");
  const lower = (ch) => ch.toLocaleLowerCase(locale());
  const upper = (ch) => ch.toLocaleUpperCase(locale());
  const isLetter = (ch, game) => Boolean(ch) && ch in (game.letter_values || {});
  // One square's cell from what was typed in it: its last letter, a blank when uppercase or
  // after "?" ("?" alone waits for its letter).
  function cellOf(typed, game) {
    const chars = Array.from(typed.replace(/\s/g, ""));
    if (!chars.length) return "";
    const last = chars[chars.length - 1];
    if (last === "?") return "?";
    const letter = lower(last);
    if (!isLetter(letter, game)) return null;
    const blank = last !== letter || chars[chars.length - 2] === "?";
    return blank ? `?${letter}` : letter;
  }
  function showCell(r, c) {
    const square = squares[r][c], cell = cells[r][c], input = square.querySelector("input");
    const letter = cell.startsWith("?") ? cell.slice(1) : cell;
    input.value = letter || (cell === "?" ? "?" : "");
    square.classList.toggle("filled", Boolean(letter));
    square.classList.toggle("blank", cell.startsWith("?") && Boolean(letter));
    square.classList.toggle("fresh", Boolean(letter) && fresh.has(`${r},${c}`));
    square.dataset.cell = cell;
  }
  function squareLabel(r, c, bonus, centre) {
    const where = t("square", {row: r + 1, col: c + 1});
    return [where, bonus ? t(`bonus_${bonus}`) : null, centre ? t("centre") : null].filter(Boolean).join(", ");
  }
  // The board of `game` (its size and bonus squares); the cells kept when the size is the same.
  function drawBoard(game) {
    const layout = game.board, size = layout.size;
    const keep = cells.length === size ? cells : null;
    if (!keep) fresh.clear();
    cells = keep || Array.from({length: size}, () => Array(size).fill(""));
    boardGame = game;
    boardBox.style.setProperty("--size", String(size));
    forgetMoves();
    squares = [];
    const rows = [];
    for (let r = 0; r < size; r++) {
      const row = [];
      for (let c = 0; c < size; c++) {
        const bonus = (layout.bonuses[r] || [])[c] || "";
        const centre = layout.centre && layout.centre.row === r && layout.centre.col === c;
        const input = el("input", {type: "text", autocomplete: "off", autocapitalize: "off",
                                   spellcheck: "false", "aria-label": squareLabel(r, c, bonus, centre),
                                   tabindex: centre ? "0" : "-1",
                                   "data-row": r, "data-col": c});
        const square = el("div", {class: "sq" + (centre ? " centre" : ""), "data-row": r, "data-col": c,
                                  "data-bonus": bonus || null, "data-label": centre ? "★" : bonus || null},
                          input);
        row.push(square);
        rows.push(square);
      }
      squares.push(row);
    }
    boardBox.replaceChildren(...rows);
    for (let r = 0; r < size; r++) for (let c = 0; c < size; c++) showCell(r, c);
    shownMoves = [];
  }
  function forgetMoves() {
    if (!shownMoves.length && !boardOut.textContent) return;
    if (running.board) running.board.abort();
    shownMoves = [];
    drawMove(null);
    boardOut.replaceChildren();
    announce("board", "");
  }
  boardBox.addEventListener("input", (event) => {
    const input = event.target;
    const r = Number(input.dataset.row), c = Number(input.dataset.col);
    const cell = cellOf(input.value, boardGame);
    if (cell !== null) cells[r][c] = cell;
    if ($("board-fresh").checked && cells[r][c]) fresh.add(`${r},${c}`);
    else fresh.delete(`${r},${c}`);
    showCell(r, c);
    forgetMoves();
    const size = cells.length;  // typing runs across, as a word is read
    if (cell && cell !== "?" && c + 1 < size) squares[r][c + 1].querySelector("input").focus();
  });
  boardBox.addEventListener("keydown", (event) => {
    const input = event.target;
    if (!input.dataset || input.dataset.row === undefined) return;
    const r = Number(input.dataset.row), c = Number(input.dataset.col), size = cells.length;
    let to = null;
    if (event.key === "ArrowUp") to = [r - 1, c];
    else if (event.key === "ArrowDown") to = [r + 1, c];
    else if (event.key === "ArrowLeft") to = [r, c - 1];
    else if (event.key === "ArrowRight") to = [r, c + 1];
    else if (event.key === "Backspace" && !input.value) to = [r, c - 1];
    else if (event.key === "Enter") {  // the form's submit is the words' and the rack's
      event.preventDefault();
      askMoves();
      return;
    }
    if (!to || to[0] < 0 || to[1] < 0 || to[0] >= size || to[1] >= size) return;
    event.preventDefault();
    squares[to[0]][to[1]].querySelector("input").focus();
  });
  // One square in the Tab order (the last one focused; the arrows move between them), not 225.
  boardBox.addEventListener("focusin", (event) => {
    if (!event.target.dataset || event.target.dataset.row === undefined) return;
    for (const input of boardBox.querySelectorAll('input[tabindex="0"]')) input.tabIndex = -1;
    event.target.tabIndex = 0;
  });
  // A whole board pasted into a square is read as the board's text.
  boardBox.addEventListener("paste", (event) => {
    const text = (event.clipboardData || {getData: () => ""}).getData("text");
    if (!text.includes("\n")) return;
    event.preventDefault();
    $("board-text").value = text;
    putText();
  });
  // The board as text (the textarea's, the CLI's), or a sentence saying what to fix.
  function readBoardText(text, game) {
    const size = game.board.size;
    const lines = text.replace(/\r/g, "").split("\n").map((line) => line.trim());
    while (lines.length && !lines[lines.length - 1]) lines.pop();
    while (lines.length && !lines[0]) lines.shift();
    if (lines.length !== size) return {error: t("board_text_lines", {want: size, found: lines.length})};
    const read = [];
    for (const [i, line] of lines.entries()) {
      const chars = Array.from(line);
      if (chars.length !== size) return {error: t("board_text_line", {line: i + 1, want: size, found: chars.length})};
      const row = [];
      for (const [j, ch] of chars.entries()) {
        const letter = lower(ch);
        if (ch === ".") row.push("");
        else if (isLetter(letter, game)) row.push(ch === letter ? letter : `?${letter}`);
        else return {error: t("board_text_char", {line: i + 1, position: j + 1, character: ch})};
      }
      read.push(row);
    }
    return {cells: read};
  }
  // The board in the URL (?board=): its text, the lines joined by "/"; none when empty.
  const boardParam = () => (!$("board-section").hidden && cells.some((row) => row.some((cell) => cell && cell !== "?"))
    ? boardText().split("\n").join("/") : "");
  const boardText = () => cells.map((row) => row.map((cell) =>
    (cell === "" || cell === "?" ? "." : cell.startsWith("?") ? upper(cell.slice(1)) : cell)).join("")).join("\n");
  function putText() {
    const read = readBoardText($("board-text").value, boardGame);
    forgetMoves();
    if (read.error) {
      boardOut.replaceChildren(el("p", {class: "error", role: "alert", "data-code": "board_text"},
                                  `${t("error")}: `, read.error));
      return false;
    }
    cells = read.cells;
    fresh.clear();
    for (let r = 0; r < cells.length; r++) for (let c = 0; c < cells.length; c++) showCell(r, c);
    writeURL(state());
    return true;
  }
  $("board-put").addEventListener("click", () => putText());
  $("board-clear").addEventListener("click", () => {
    cells = cells.map((row) => row.map(() => ""));
    fresh.clear();
    for (let r = 0; r < cells.length; r++) for (let c = 0; c < cells.length; c++) showCell(r, c);
    $("board-text").value = "";
    forgetMoves();
    writeURL(state());
  });
  $("board-paste").addEventListener("toggle", () => {  // opened: the board as it is, to copy
    if ($("board-paste").open && !$("board-text").value.trim()) $("board-text").value = boardText();
  });
  // The move's tiles on their squares (`move` null: none), each marked new.
  function drawMove(move) {
    for (const square of boardBox.querySelectorAll(".placed")) {
      square.classList.remove("placed", "placed-blank");
      delete square.dataset.placed;
      const shown = square.querySelector(".new-tile");
      if (shown) shown.remove();
    }
    for (const tile of (move && move.tiles) || []) {
      const square = squares[tile.row] && squares[tile.row][tile.col];
      if (!square) continue;
      square.classList.add("placed");
      if (tile.blank) square.classList.add("placed-blank");
      square.dataset.placed = tile.letter;
      square.append(el("span", {class: "new-tile", "aria-hidden": "true"}, tile.letter));
    }
  }
  function choose(index) {
    drawMove(shownMoves[index] || null);
    for (const button of boardOut.querySelectorAll(".move")) {
      button.setAttribute("aria-pressed", String(Number(button.dataset.index) === index));
    }
  }
  function moveItem(move, index) {
    const direction = t(move.direction === "down" ? "down" : "across");
    const button = el("button", {type: "button", class: "move", "data-index": index,
                                 "data-word": move.word, "data-score": move.score,
                                 "aria-pressed": String(index === 0)},
      el("span", {class: "word"}, move.word),
      el("span", {class: "score"}, t("points", {n: move.score})),
      el("span", {class: "where"}, t("move_at", {row: move.row + 1, col: move.col + 1, direction}),
         move.bingo ? ` · ${t("bingo_move")}` : null),
      (move.words || []).length > 1
        ? el("span", {class: "formed"}, `${t("words_formed")}: `,
             move.words.map((w) => `${w.word} ${t("points", {n: w.score})}`).join(", "))
        : null);
    button.addEventListener("click", () => choose(index));
    return el("li", {}, button);
  }
  async function askMoves(whatIf = false) {  // whatIf: a rack the game cannot deal, anyway
    const game = gameSelect.value, rack = rackInput.value.replace(/\s/g, "");
    if (!rack) {
      forgetMoves();
      boardOut.replaceChildren(el("p", {class: "status empty", role: "alert"}, t("board_no_rack"), " ",
                                  en("Type the rack above to find moves.")));
      rackInput.focus();
      return;
    }
    const signal = restart("board");
    writeURL(state());
    drawMove(null);
    shownMoves = [];
    boardOut.setAttribute("aria-busy", "true");
    boardOut.replaceChildren(status(t("searching"), "searching…"));
    const board = cells.map((row) => row.map((cell) => (cell === "?" ? "" : cell)));
    try {
      const reply = await api("v1/moves", {game, board, rack, limit: MOVES_SHOWN,
                                           lexicon: lexSelect.value || undefined,
                                           ...asked({whatIf})}, signal);
      shownMoves = reply.moves;
      const summary = t("n_moves", {n: reply.count}) + (reply.truncated ? t("moves_first_shown", {shown: reply.moves.length}) : "");
      announce("board", summary);
      boardOut.replaceChildren(...[
        whatIf ? whatIfShown() : null,
        reply.moves.length
          ? el("p", {class: "summary"}, summary, " ", en(`${reply.count} moves, best first`))
          : status(t("no_moves"), "no moves with this rack on this board"),
        reply.complete === false ? el("p", {class: "hint cut"}, t("moves_cut"), " ",
                                      en("The search reached its limit; a better move may exist.")) : null,
        reply.moves.length ? el("ol", {class: "moves", id: "moves"}, reply.moves.map(moveItem)) : null,
        el("p", {class: "lexicon-line"}, t("rack_lexicon_line", {name: reply.lexicon.name,
          version: reply.lexicon.version, game: gameName(game)}))].filter(Boolean));
      choose(0);
    } catch (e) {
      if (!aborted(e)) {
        boardOut.replaceChildren(...[errorBox(e), whatIfButton(e, {whatIf}, () => askMoves(true))]
                                   .filter(Boolean));
      }
    } finally {
      if (!signal.aborted) boardOut.removeAttribute("aria-busy");
    }
  }
  $("moves-go").addEventListener("click", () => askMoves());
  // POST /v1/play: the player's new tiles (typed with "Yeni taşlarım" ticked) on the board
  // without them; legal or why not, the words it forms, each valid or not, and its score.
  async function askPlay() {
    const signal = restart("board");
    writeURL(state());
    drawMove(null);
    shownMoves = [];
    const tiles = [], board = cells.map((row) => row.map((cell) => (cell === "?" ? "" : cell)));
    for (const key of fresh) {
      const [r, c] = key.split(",").map(Number), cell = board[r][c];
      if (!cell) continue;
      tiles.push({row: r, col: c, letter: cell.replace("?", ""), blank: cell.startsWith("?")});
      board[r][c] = "";
    }
    boardOut.setAttribute("aria-busy", "true");
    boardOut.replaceChildren(status(t("checking"), "checking…"));
    try {
      const game = gameSelect.value;
      const reply = await api("v1/play", {game, board, tiles, lexicon: lexSelect.value || undefined}, signal);
      const good = reply.legal && reply.words.every((w) => w.valid);
      const verdict = !reply.legal
        ? [M().text[`play_${reply.reason}`] ? t(`play_${reply.reason}`) : t("play_other"), " ",
           technical({message: reply.message, code: reply.reason})]
        : good ? [t("play_ok", {n: reply.score}), reply.bingo ? ` · ${t("bingo_move")}` : null]
               : [t("play_invalid_words")];
      announce("board", verdict.filter((x) => typeof x === "string").join(""));
      boardOut.replaceChildren(
        el("p", {class: `verdict-line ${good ? "ok" : "no"}`, id: "play-verdict",
                 "data-legal": String(reply.legal), "data-reason": reply.reason || ""}, verdict),
        el("ul", {class: "verdicts play-words"}, reply.words.map((w) => el("li", {
          class: "verdict", "data-word": w.word, "data-valid": String(w.valid)},
          el("div", {class: "verdict-head"},
             el("span", {class: "mark", "aria-hidden": "true"}, w.valid ? "✓" : "✗"),
             el("span", {class: "word"}, w.word),
             el("span", {class: "state"}, w.valid ? t("valid") : t("invalid")),
             w.valid ? null : el("span", {class: "reason"}, reasonText(w.reason)),
             el("span", {class: "score"}, t("points", {n: w.score})))))),
        el("p", {class: "lexicon-line"}, t("rack_lexicon_line", {name: reply.lexicon.name,
          version: reply.lexicon.version, game: gameName(game)})));
    } catch (e) {
      if (!aborted(e)) boardOut.replaceChildren(errorBox(e));
    } finally {
      if (!signal.aborted) boardOut.removeAttribute("aria-busy");
    }
  }
  $("play-go").addEventListener("click", askPlay);
  // The section shows for a board game only; its squares are made when first shown.
  function showBoard(game) {
    const section = $("board-section");
    section.hidden = !(game && game.board);
    if (section.hidden) return;
    if (boardGame !== game || !squares.length) drawBoard(game);
    else for (let r = 0; r < squares.length; r++) for (let c = 0; c < squares.length; c++) {
      const square = squares[r][c];  // the language changed: the squares' names
      square.querySelector("input").setAttribute("aria-label", squareLabel(r, c, square.dataset.bonus,
                                                                           square.classList.contains("centre")));
    }
  }

  // ---- games and provenance --------------------------------------------------------------
  function describeGame() {
    const game = games[gameSelect.value];
    const desc = $("game-desc");
    if (!game) return;
    const facts = [t("min_length", {n: game.min_length}), t("rack_size", {n: game.rack_size}),
      t(game.scoring === "product" ? "score_product" : "score_sum"),
      game.bingo_bonus ? t("bingo", {n: game.rack_size, bonus: game.bingo_bonus}) : null,
      game.blanks ? t("blanks", {n: game.blanks}) : null,
      game.two_letter_tiles ? t("two_letter") : null,
      game.discard ? t("discard", {n: game.discard}) : null,
      game.joker_finish_multiplier > 1 ? t("joker_finish", {n: game.joker_finish_multiplier}) : null,
      game.min_hand_average ? t("hand_average", {n: game.min_hand_average}) : null,
      game.lexicon && lexicons[game.lexicon] ? `${ui("lexicon").toLocaleLowerCase(lang)}: ${lexiconName(lexicons[game.lexicon])}` : null];
    desc.replaceChildren(`${game.title || game.name}: ${facts.filter(Boolean).join(" · ")}. `,
                         en(game.description || ""));
    rackInput.placeholder = example(game);
    showBoard(game);
    $("values").replaceChildren(...valuesBlock(game));
  }
  // The game's letter values as tiles.
  function valuesBlock(game) {
    const values = game.letter_values || {};
    const lex = lexicons[game.lexicon || lexSelect.value || defaultLexicon];
    const order = lex && lex.alphabet ? [...lex.alphabet].filter((ch) => ch in values) : Object.keys(values);
    return [el("p", {class: "label", id: "values-h"}, t("values"), " ", en("letter values")),
            el("ul", {class: "value-tiles", "aria-labelledby": "values-h"},
               order.map((ch) => el("li", {"data-letter": ch, "data-value": values[ch]}, tile(ch, values[ch]))))];
  }
  // An example rack this game can deal (its letters, two-letter tiles only where it has them).
  function example(game) {
    const [plain, pair, hand] = EXAMPLES[game.lexicon === "ku" ? "ku" : "tr"];
    if (hand && game.discard) return hand;
    return game.two_letter_tiles && pair ? pair : plain;
  }
  const languageOf = (lex) => (lex && LANGUAGES[lex.alphabet]) || null;
  const lexiconName = (lex) => {
    const language = languageOf(lex);
    return language ? `${t(`language_${language}`)} (${lex.name})` : lex.name;
  };
  // Whether `game` scores every letter of lexicon `name` (the API refuses it otherwise).
  function fits(game, name) {
    const lex = lexicons[name || defaultLexicon];
    if (!game || !lex || !lex.alphabet) return true;
    return [...lex.alphabet].every((ch) => ch in (game.letter_values || {}));
  }
  // A game played with its own lexicon brings it; a lexicon brings a game for its letters.
  function pairGame() {
    const game = games[gameSelect.value];
    if (game && game.lexicon && lexicons[game.lexicon]) lexSelect.value = game.lexicon;
    else if (!fits(game, lexSelect.value)) lexSelect.value = defaultLexicon;
  }
  function pairLexicon() {
    if (fits(games[gameSelect.value], lexSelect.value)) return;
    const fitting = Object.values(games).find((g) => fits(g, lexSelect.value));
    if (fitting) gameSelect.value = fitting.name;
  }
  async function loadGames(wanted) {
    try {
      const reply = await api("v1/games");
      games = Object.fromEntries(reply.games.map((g) => [g.name, g]));
      defaultGame = reply.default || defaultGame;
      gameSelect.replaceChildren(...reply.games.map((g) => el("option", {value: g.name}, g.title || g.name)));
    } catch (e) {
      $("game-desc").replaceChildren(errorBox(e));
    }
    const names = [...gameSelect.options].map((o) => o.value);
    if (wanted && !names.includes(wanted)) gameSelect.append(el("option", {value: wanted}, wanted));
    gameSelect.value = wanted || defaultGame;
  }
  // What a player needs of a lexicon: which it is, its size and its date (how it was built,
  // and its licence terms, are for maintainers: docs/lexicons.md).
  function lexiconBlock(lex) {
    const source = lex.source || {};
    const row = (term, english, ...value) => [el("dt", {}, term, " ", en(english)), el("dd", {}, value)];
    const date = (lex.created || "").slice(0, 10);
    const licence = String(source.licence || "").split(":")[0].trim();
    return el("article", {class: "lexicon", "data-lexicon": lex.name},
      el("h3", {}, lexiconName(lex)),
      el("dl", {},
        row(t("lex_words"), "words", count(lex.words)),
        date ? row(t("lex_date"), "date", el("time", {datetime: date}, date)) : null,
        source.kind || source.attribution ? row(t("lex_source"), "source",  // CC BY-SA asks for it
          source.attribution || t(`kind_${source.kind}`) || source.kind) : null,
        licence ? row(t("lex_licence"), "licence", licence) : null,
        row(t("lex_version"), "version", el("code", {}, lex.version || ""))));
  }
  async function loadLexicons(wanted) {
    try {
      const reply = await api("v1/lexicons");
      lexicons = Object.fromEntries(reply.lexicons.map((lex) => [lex.name, lex]));
      defaultLexicon = reply.default || defaultLexicon;
      lexSelect.replaceChildren(...reply.lexicons.map((lex) => el("option", {value: lex.name}, lex.name)));
      lexSelect.value = lexicons[wanted] ? wanted : defaultLexicon;
    } catch (e) {
      lexiconsFailed = e;
    }
  }
  function showLexicons() {
    if (lexiconsFailed) { $("lexicons").replaceChildren(errorBox(lexiconsFailed)); return; }
    for (const option of lexSelect.options) {
      if (lexicons[option.value]) option.textContent = lexiconName(lexicons[option.value]);
    }
    const chosen = lexicons[lexSelect.value || defaultLexicon];  // the others: in the picker
    $("lexicons").replaceChildren(...(chosen ? [lexiconBlock(chosen)] : []));
  }
  async function probeReports() {
    try {
      reportsTaken = (await fetch("v1/reports", {headers: {Accept: "application/json"}})).status === 405;
    } catch (e) {
      reportsTaken = false;
    }
  }

  // ---- the lists players study ---------------------------------------------------------------
  // From GET /v1/lexicons/{name}/words (every valid word, one a line, cached by its ETag),
  // fetched when the section is opened: the two- and three-letter words, and the short words
  // (up to 4 letters) with each of the game's DEAREST dearest letters (j f ğ p v in Turkish:
  // the tiles worth most, which a player learns where to lay).
  const wordLists = {};
  const LETTER_LIST_LENGTH = 4, DEAREST = 5;
  async function showLists() {
    const box = $("lists-out");
    if (!$("lists").open) return;
    const name = lexSelect.value || defaultLexicon;
    const game = games[gameSelect.value];
    if (!name || !game) return;
    box.setAttribute("aria-busy", "true");
    box.replaceChildren(status(t("list_loading"), "loading…"));
    try {
      if (!wordLists[name]) {
        const reply = await fetch(`v1/lexicons/${encodeURIComponent(name)}/words`);
        if (!reply.ok) {
          let error = null;
          try { error = (await reply.json()).error; } catch (e) { error = null; }
          throw new ApiError(error ? error.message : `HTTP ${reply.status}`, error && error.code,
                             reply.status, null, error && error.details);
        }
        wordLists[name] = (await reply.text()).split("\n").filter(Boolean);
      }
      box.replaceChildren(...listsBlock(wordLists[name], game));
    } catch (e) {
      box.replaceChildren(errorBox(e.code !== undefined ? e : new ApiError(String(e), "network")));
    } finally {
      box.removeAttribute("aria-busy");
    }
  }
  function listsBlock(words, game) {
    const length = (w) => Array.from(w).length;
    const values = game.letter_values || {};
    const top = Object.keys(values).sort((a, b) => values[b] - values[a] || a.localeCompare(b, "tr")).slice(0, DEAREST);
    const lists = [  // [key, title, the longest word it lists, which words]
      ["two", t("list_two"), 2, (w) => length(w) === 2],
      ["three", t("list_three"), 3, (w) => length(w) === 3],
      ...top.map((ch) => [`letter-${ch}`, t("list_letter", {letter: ch, n: LETTER_LIST_LENGTH}),
                          LETTER_LIST_LENGTH, (w) => length(w) <= LETTER_LIST_LENGTH && w.includes(ch)]),
    ];
    return lists.map(([key, title, longest, wanted]) => {
      const found = words.filter((w) => wanted(w) && length(w) >= game.min_length);
      const none = longest < game.min_length ? t("list_empty", {n: game.min_length}) : t("list_none");
      return el("section", {class: "word-list", "data-list": key},
        el("h3", {}, title, " ", el("span", {class: "count"}, `(${count(found.length)})`)),
        found.length ? el("ul", {class: "chips"}, found.map((w) => el("li", {},
                         el("a", {href: pageLink({w, game: gameSelect.value !== defaultGame && gameSelect.value})}, w))))
                     : el("p", {class: "hint"}, none));
    });
  }

  // ---- the language: Kurmanji with a Kurmanji lexicon, Turkish otherwise -----------------
  function speak() {
    lang = languageOf(lexicons[lexSelect.value || defaultLexicon]) === "ku" ? "ku" : "tr";
    document.documentElement.lang = lang;
    document.title = ui("title");
    for (const node of document.querySelectorAll("[data-t]")) node.textContent = ui(node.dataset.t);
    showLexicons();
    describeGame();
  }

  // ---- wiring ------------------------------------------------------------------------
  function run() {
    const s = state();
    writeURL(s);
    showLists();
    return Promise.all([runWords(s.w, s.game), runRack(s)]);
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const s = state();
    if (!s.w && !s.rack) {  // nothing asked: say what to type rather than do nothing
      last.words = null;
      wordsOut.replaceChildren(el("p", {class: "status empty", role: "alert"},
        t("nothing_asked"), " ", en("Type words to check, or tiles to try.")));
      if (rackOut.textContent) { last.rack = null; runRack(s); }  // the rack emptied: say so
      wordsInput.focus();
      return;
    }
    run();
  });
  gameSelect.addEventListener("change", () => { pairGame(); speak(); run(); });
  lexSelect.addEventListener("change", () => { pairLexicon(); speak(); run(); });
  $("lists").addEventListener("toggle", showLists);

  async function start() {
    const s = readURL();
    wordsInput.value = s.w;
    rackInput.value = s.rack;
    for (const f of FILTERS) $(f).value = s[f];
    const [loaded] = await Promise.all([fetch("static/messages.json").then((r) => r.json()),
                                        loadLexicons(s.lex), probeReports()]);
    messages = loaded;
    await loadGames(s.game);
    if (s.lex) pairLexicon(); else pairGame();
    speak();
    // A board in the link: put on the board, and its moves asked when the rack is there too.
    let board = false;
    if (s.board && !$("board-section").hidden) {
      $("board-text").value = s.board.replace(/\//g, "\n");
      board = putText();
    }
    await run();
    if (board && s.rack) await askMoves();
    document.documentElement.setAttribute("data-ready", "true");  // for tests and scripts
  }
  start();
})();
