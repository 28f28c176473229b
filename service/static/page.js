// kelime's page: asks the JSON API (same origin, relative URLs) and keeps the question in
// the URL (?w=kitap+evler, ?rack=kale%3F%5Blm%5D&game=kelimatik) so a result can be shared.
// Everything shown from a reply goes in through textContent / setAttribute, never as HTML.
"use strict";

(() => {
  const REASONS = {
    not_in_dictionary: ["sözlükte yok", "not in the dictionary"],
    proper_name: ["özel ad", "proper name"],
    obscene: ["müstehcen veya hakaret", "obscene or insulting"],
    too_short: ["bu oyun için çok kısa", "too short for this game"],
    invalid_chars: ["sözlüğün alfabesinde olmayan karakter", "letters outside the lexicon's alphabet"],
    phrase: ["tek kelime değil, söz öbeği", "a phrase, not one word"],
  };
  const SOURCE_KINDS = {bootstrap: "çevrimdışı başlangıç listesi", tdk: "TDK taraması",
                        list: "kelime listesi", test: "deneme"};
  // The API's error codes in Turkish; its English message follows as the gloss.
  const ERRORS = {
    invalid_rack: "ıstaka okunamadı ya da bu oyunun ıstakası değil",
    invalid_pattern: "tahta deseni okunamadı", invalid_option: "bu seçenekle sorulamaz",
    over_limit: "sınırın üstünde", unknown_lexicon: "bu sözlük yüklü değil",
    unknown_game: "bu oyun bilinmiyor", invalid_request: "istek okunamadı",
    too_many_words: "çok fazla kelime", word_too_long: "kelime çok uzun",
    not_ready: "sözlük henüz yüklenmedi", busy: "sunucu meşgul, biraz sonra yeniden deneyin",
    index_missing: "bu sözlükle taş denenemiyor", network: "sunucuya ulaşılamadı",
  };
  // A lexicon's language, by its letters (GET /v1/lexicons gives each one's alphabet).
  const LANGUAGES = {"abcçdefgğhıijklmnoöprsştuüvyz": "Türkçe",
                     "abcçdeêfghiîjklmnopqrsştuûvwxyz": "Kürtçe (Kurmancî)"};
  const EXAMPLES = {tr: ["kalem?", "kale?[lm]", "kalemkitap?ilgi"], ku: ["mêr?n", "mêr?[an]"]};
  // POST /v1/reports: what a player may say is wrong with a verdict (kelime.reports.KINDS)
  const REPORT_KINDS = [
    ["missing", "Eksik: gerçek bir kelime, oyun kabul etmiyor", "missing: a real word the game refuses"],
    ["wrong", "Yanlış: oyun kabul ediyor ama kelime değil ya da yanlış yazılmış",
     "wrong: the game accepts it, but it is not a word or misspelt"],
    ["offensive", "Hakaret ya da müstehcen: oyun kabul ediyor",
     "offensive: an insult or obscenity the game accepts"],
  ];
  const NOTE_CHARS = 500;        // a report's note (KELIME_MAX_NOTE_CHARS' default)
  const DETAILS_FOR = 20;        // GET /v1/words (hooks, TDK entries) for the first 20 words
  const numbers = new Intl.NumberFormat("tr-TR");
  const $ = (id) => document.getElementById(id);
  const form = $("soru"), wordsInput = $("w"), rackInput = $("rack"), gameSelect = $("game");
  const lexSelect = $("lex");
  const wordsOut = $("words-out"), rackOut = $("rack-out");
  // What a screen reader announces (role=status): the summary of an answer, not all of it.
  const announce = (section, text) => { $(`${section}-status`).textContent = text; };
  let games = {}, defaultGame = "kelimelik";
  let lexicons = {}, defaultLexicon = "";
  let reportsTaken = false;   // GET v1/reports is 405 (the POST route is there), else 404
  const last = {words: null, rack: null};             // the question each section shows
  const running = {words: null, rack: null};          // its AbortController

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
  const errorBox = (err) => el("p", {class: "error", role: "alert"}, "Hata: ",
    ERRORS[err.code] || "istek yanıtlanamadı", ". ", en(err.message),
    err.code ? el("span", {class: "en"}, ` (${err.code})`) : null);
  const gameName = (name) => (games[name] && games[name].title) || name;
  const count = (n) => numbers.format(n);
  function pageLink(params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
    return location.pathname + "?" + q.toString();
  }

  // ---- the API ----------------------------------------------------------------------
  class ApiError extends Error {
    constructor(message, code, status, retryAfter) {
      super(message);
      this.code = code; this.status = status; this.retryAfter = retryAfter;
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
                         reply.headers.get("Retry-After"));
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
            lex: q.get("lex") || ""};
  }
  function state() {
    return {w: wordsInput.value.trim(), rack: rackInput.value.trim(), game: gameSelect.value,
            lex: lexSelect.value};
  }
  function writeURL(s) {
    const q = new URLSearchParams();
    if (s.w) q.set("w", s.w);
    if (s.rack) q.set("rack", s.rack);
    if (s.game && s.game !== defaultGame) q.set("game", s.game);
    if (s.lex && s.lex !== defaultLexicon) q.set("lex", s.lex);
    const query = q.toString();
    history.replaceState(null, "", location.pathname + (query ? "?" + query : ""));
  }
  function splitWords(text) {
    const parts = text.includes(",") ? text.split(",") : text.split(/\s+/);
    return parts.map((w) => w.trim().replace(/\s+/g, " ")).filter(Boolean);
  }

  // ---- words -----------------------------------------------------------------------
  function reasonText(reason) {
    const known = REASONS[reason];
    return known ? [known[0], " ", en(`(${known[1]})`)] : [reason || "geçersiz"];
  }
  // `asked`: the lexicon and game the verdict came from, which a report of it names too.
  function verdictItem(result, asked) {
    const valid = result.valid === true;
    const reason = result.reason || "";
    const opener = reportsTaken ? el("button", {type: "button", class: "report-open",
                                                "aria-expanded": "false"},
      "Bildir", el("span", {class: "sr"}, ` (${result.word})`), " ", en("report this word")) : null;
    const head = el("div", {class: "verdict-head"},
      el("span", {class: "mark", "aria-hidden": "true"}, valid ? "✓" : "✗"),
      el("span", {class: "word"}, result.word),
      result.normalized && result.normalized !== result.word
        ? el("span", {class: "normal"}, "→ ", result.normalized) : null,
      el("span", {class: "state"}, valid ? "geçerli" : "geçersiz:"),
      valid ? en("valid") : el("span", {class: "reason"}, reasonText(reason)),
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
      el("label", {for: id(kind)}, text, " ", en(english))));
    const note = el("textarea", {id: id("note"), rows: 3, maxlength: NOTE_CHARS,
                                 "aria-describedby": id("note-hint")});
    const send = el("button", {type: "button", class: "report-send"}, "Gönder ", en("send"));
    const cancel = el("button", {type: "button", class: "report-cancel"}, "Vazgeç ", en("cancel"));
    const panel = el("div", {class: "report", id: id("form"), role: "group",
                             "aria-labelledby": id("title")},
      el("fieldset", {},
        el("legend", {id: id("title")}, "Bildirim: ", el("q", {}, result.word), " ",
           en("report this word: what is wrong with the verdict?")),
        kinds),
      el("label", {for: id("note")}, "Not ", en("note, optional")), note,
      el("p", {class: "hint", id: id("note-hint")},
         `İsteğe bağlı, en çok ${count(NOTE_CHARS)} karakter; düz metin olarak saklanır. `,
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
      outcome.replaceChildren("Gönderiliyor… ", en("sending…"));
      const body = {word: result.word, kind: panel.querySelector("input:checked").value,
                    game: asked.game, note: note.value.trim() ? note.value : null};
      if (asked.lexicon) body.lexicon = asked.lexicon;
      try {
        const reply = await api("v1/reports", body);
        outcome.className = "report-outcome done";
        outcome.replaceChildren(`Teşekkürler: bildirim #${reply.id} (${count(reply.count)}. kez) `,
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
      return ["Bu sunucu kelime bildirimi toplamıyor. ", en("This server does not collect reports.")];
    }
    if (e.status === 429) {
      const seconds = /^\d+$/.test(e.retryAfter || "") ? Number(e.retryAfter) : 0;
      const minutes = Math.max(1, Math.ceil(seconds / 60));
      return seconds
        ? [`Çok fazla bildirim: ${count(minutes)} dakika sonra yeniden deneyin. `,
           en(`Too many reports: try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`)]
        : ["Çok fazla bildirim: daha sonra yeniden deneyin. ", en("Too many reports: try again later.")];
    }
    if (e.code === "reports_full" || e.code === "reports_unavailable" || e.code === "busy") {
      return ["Bildirimler şu an alınamıyor: daha sonra yeniden gönderin. ",
              en("Reports cannot be taken right now: send it again later.")];
    }
    return ["Bildirim gönderilemedi: ", e.message, e.code ? en(` (${e.code})`) : null];
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
      parts.push(el("p", {}, el("span", {class: "label"}, "Öneriler"), " ", en("suggestions"), ": ",
        el("ul", {class: "chips"}, suggestions.map((s) => {
          const word = typeof s === "string" ? s : (s && s.word) || "";
          return el("li", {}, el("a", {href: pageLink({w: word, game: game !== defaultGame && game}),
                                        "data-suggestion": word}, word));
        }))));
    }
    if (info.hooks) {
      parts.push(letters("Başına gelebilen harfler", "front hooks", info.hooks.front));
      parts.push(letters("Sonuna gelebilen harfler", "back hooks", info.hooks.back));
    }
    if (info.entries && info.entries.length) parts.push(entriesBlock(info.entries));
    else if (info.cache) parts.push(el("p", {class: "hint"}, "TDK'de bu kelimenin tanımı yok. ",
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
  const runWords = (text, game) => runSection("words", wordsOut, JSON.stringify([text, game]),
                                               (signal) => askWords(text, game, signal));
  const runRack = (rack, game) => runSection("rack", rackOut, JSON.stringify([rack, game]),
                                             (signal) => askRack(rack, game, signal));

  async function askWords(text, game, signal) {
    const words = splitWords(text);
    if (!words.length) { wordsOut.replaceChildren(); announce("words", ""); return; }
    wordsOut.replaceChildren(status("Denetleniyor…", "checking…"));
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
    announce("words", reply.all_valid ? "Hepsi geçerli" : `${reply.results.length} kelimeden ${valid} tanesi geçerli`);
    const source = {lexicon: reply.lexicon && reply.lexicon.name, game};
    const items = reply.results.map((r) => verdictItem(r, source));
    reply.results.forEach((r, i) => {  // the words past DETAILS_FOR get their suggestions here
      if (i >= DETAILS_FOR && r.suggestions && r.suggestions.length) {
        items[i].querySelector(".details").replaceChildren(...detailsBlock(r, game));
      }
    });
    wordsOut.replaceChildren(
      el("p", {class: "summary"}, reply.all_valid ? "Hepsi geçerli" : `${count(reply.results.length)} kelimeden ${count(valid)} tanesi geçerli`,
         " ", en(reply.all_valid ? "all valid" : `${valid} of ${reply.results.length} valid`)),
      el("ul", {class: "verdicts", id: "verdicts"}, items),
      el("p", {class: "lexicon-line"}, `Sözlük: ${reply.lexicon.name} ${reply.lexicon.version} · ${count(reply.lexicon.words)} kelime · oyun: ${gameName(game)}`));
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
  function tiles(list) {
    const spoken = list.map((t) => (t.startsWith("?") ? `joker ${t.slice(1)}` : t)).join(", ");
    return [el("span", {class: "tiles", "aria-hidden": "true"},
               list.map((t) => t.startsWith("?")
                 ? el("span", {class: "tile blank", title: `joker: ${t.slice(1)}`}, t.slice(1) || "?")
                 : el("span", {class: "tile"}, t))),
            el("span", {class: "sr"}, ` taşlar: ${spoken}`)];
  }
  function rackWord(item, rack, game) {
    return el("li", {"data-word": item.word, "data-score": item.score},
      el("a", {class: "word", href: pageLink({w: item.word, rack, game: game !== defaultGame && game}),
               title: "Bu kelimeyi denetle (check this word)"}, item.word),
      tiles(item.tiles || []),
      item.score === undefined ? null : el("span", {class: "score"}, `${count(item.score)} puan`));
  }
  function anagramBlock(reply, rack, game) {
    if (!reply.words.length) return [status("Bu taşlarla kelime yok.", "no words from these tiles")];
    const groups = new Map();
    for (const item of reply.words) {
      const n = Array.from(item.word).length;
      if (!groups.has(n)) groups.set(n, []);
      groups.get(n).push(item);
    }
    const lengths = [...groups.keys()].sort((a, b) => b - a);
    const shown = reply.words.length;
    return [
      el("p", {class: "summary"}, `${count(reply.count)} kelime`,
         reply.truncated ? `, puana göre ilk ${count(shown)} tanesi gösteriliyor` : "", " ",
         en(reply.truncated ? `${reply.count} words, the first ${shown} shown` : `${reply.count} words`)),
      el("div", {id: "anagram-results"}, lengths.map((n) => {
        const items = groups.get(n);
        return el("section", {class: "length-group", "aria-label": `${n} harfli kelimeler`},
          el("h3", {}, `${n} harfli `, el("span", {class: "count"}, `(${count(items.length)})`)),
          el("ul", {class: "words"}, items.map((item) => rackWord(item, rack, game))));
      })),
    ];
  }
  function splitBlock(reply, rack, game) {
    const verdict = reply.found
      ? el("p", {class: "verdict-line ok"}, "El tamamen dizildi ", en("laid out whole"))
      : el("p", {class: "verdict-line no"}, "El tamamen dizilemedi ", en("not laid out whole"));
    const facts = [];
    if (reply.thrown) facts.push(el("p", {}, el("span", {class: "label"}, "Atılan taş: "),
                                    el("span", {class: "tile" + (reply.thrown === "?" ? " blank" : "")}, reply.thrown)));
    if ((reply.others_penalty_multiplier || 1) > 1)
      facts.push(el("p", {class: "joker-finish"}, el("span", {class: "label"}, "Jokerle bitiş: "),
                    `rakiplerin cezası ${reply.others_penalty_multiplier} kat `,
                    en(`the others' penalty ×${reply.others_penalty_multiplier}`)));
    const left = reply.discarded || [];
    if (left.length) facts.push(el("p", {}, el("span", {class: "label"}, "Artan taşlar: "),
                                   left.map((t) => [el("span", {class: "tile"}, t), " "])));
    facts.push(el("p", {}, el("span", {class: "label"}, "Ceza: "), `${count(reply.penalty)} puan`));
    if (!reply.complete) facts.push(el("p", {class: "hint"}, "Süre doldu: daha iyi bir dizilim olabilir. ",
                                       en("The search ran out of time; a better layout may exist.")));
    return el("section", {class: "split", id: "split-results", "aria-labelledby": "split-h"},
      el("h3", {id: "split-h"}, "Harfbank dizilimi ", en("Harfbank split")), verdict,
      reply.words.length ? el("ul", {class: "words"}, reply.words.map((item) => rackWord(item, rack, game))) : null,
      facts);
  }
  async function askRack(rack, game, signal) {
    if (!rack) { rackOut.replaceChildren(); announce("rack", ""); return; }
    rackOut.replaceChildren(status("Aranıyor…", "searching…"));
    const splitting = Boolean(games[game] && games[game].discard);  // Harfbank's split
    const lexicon = lexSelect.value || undefined;
    const [anagram, split] = await Promise.allSettled([
      api("v1/anagram", {rack, game, lexicon}, signal),
      splitting ? api("v1/split", {rack, game, lexicon}, signal) : Promise.resolve(null)]);
    if (signal.aborted) return;
    const parts = [];
    if (splitting) {  // Harfbank's own question first: can the hand be laid out whole?
      if (split.status === "fulfilled") parts.push(splitBlock(split.value, rack, game));
      else if (anagram.status === "fulfilled") parts.push(errorBox(split.reason));
    }
    if (anagram.status === "fulfilled") parts.push(...anagramBlock(anagram.value, rack, game));
    else parts.push(errorBox(anagram.reason));
    announce("rack", anagram.status === "fulfilled" ? `${anagram.value.count} kelime` : "");
    if (anagram.status === "fulfilled") {
      const lex = anagram.value.lexicon;
      parts.push(el("p", {class: "lexicon-line"}, `Sözlük: ${lex.name} ${lex.version} · oyun: ${gameName(game)}`));
    } else {
      last.rack = null;
    }
    rackOut.replaceChildren(...parts);
  }

  // ---- games and provenance --------------------------------------------------------------
  function describeGame() {
    const game = games[gameSelect.value];
    const desc = $("game-desc");
    if (!game) return;
    const facts = [`en az ${game.min_length} harf`, `ıstaka ${game.rack_size} taş`,
      game.scoring === "product" ? "puan: taş değerleri toplamı × taş sayısı"
                                 : "puan: taş değerleri toplamı",
      game.bingo_bonus ? `${game.rack_size} taşın hepsi +${game.bingo_bonus}` : null,
      game.blanks ? `${game.blanks} joker` : null,
      game.two_letter_tiles ? "ikili harf taşı" : null,
      game.discard ? `${game.discard} taş atılarak bitilir` : null,
      game.joker_finish_multiplier > 1 ? `jokerle bitişte rakiplerin cezası ${game.joker_finish_multiplier} kat` : null,
      game.min_hand_average ? `el başına ortalama en az ${game.min_hand_average} puan` : null,
      game.lexicon && lexicons[game.lexicon] ? `sözlük: ${lexiconName(lexicons[game.lexicon])}` : null];
    desc.replaceChildren(`${game.title || game.name}: ${facts.filter(Boolean).join(" · ")}. `,
                         en(game.description || ""));
    rackInput.placeholder = example(game);
  }
  // An example rack this game can deal (its letters, two-letter tiles only where it has them).
  function example(game) {
    const [plain, pair, hand] = EXAMPLES[game.lexicon === "ku" ? "ku" : "tr"];
    if (hand && game.discard) return hand;
    return game.two_letter_tiles && pair ? pair : plain;
  }
  const lexiconName = (lex) => `${LANGUAGES[lex.alphabet] || lex.name} (${lex.name})`;
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
    describeGame();
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
    describeGame();
  }
  function lexiconBlock(lex) {
    const source = lex.source || {};
    const counts = lex.counts || {};
    const rejected = counts.rejected_by_reason || {};
    const row = (term, english, ...value) => [el("dt", {}, term, " ", en(english)), el("dd", {}, value)];
    return el("article", {class: "lexicon", "data-lexicon": lex.name},
      el("h3", {}, lexiconName(lex)),
      el("dl", {},
        row("Ad", "name", lex.name),
        row("Sürüm", "version", el("code", {}, lex.version || "")),
        row("Kaynak", "source", source.name || "", source.kind ? ` (${SOURCE_KINDS[source.kind] || source.kind})` : ""),
        source.note ? row("Not", "note", source.note) : null,
        row("Lisans", "licence", source.licence || "belirtilmemiş"),
        row("Kelime sayısı", "words", count(lex.words)),
        counts.rejected !== undefined ? row("Elenen", "rejected", count(counts.rejected),
          Object.keys(rejected).length ? [" (", Object.entries(rejected).map(([r, n], i) =>
            [i ? ", " : "", (REASONS[r] || [r])[0], ": ", count(n)]), ")"] : "") : null,
        lex.created ? row("Oluşturulma", "created", lex.created) : null,
        lex.alphabet ? row("Alfabe", "alphabet", lex.alphabet) : null,
        lex.sha256 ? row("SHA-256", "sha256", el("code", {}, lex.sha256)) : null));
  }
  async function loadLexicons(wanted) {
    const box = $("lexicons");
    try {
      const reply = await api("v1/lexicons");
      lexicons = Object.fromEntries(reply.lexicons.map((lex) => [lex.name, lex]));
      defaultLexicon = reply.default || defaultLexicon;
      lexSelect.replaceChildren(...reply.lexicons.map((lex) =>
        el("option", {value: lex.name}, lexiconName(lex))));
      lexSelect.value = lexicons[wanted] ? wanted : defaultLexicon;
      box.replaceChildren(...reply.lexicons.map(lexiconBlock));
    } catch (e) {
      box.replaceChildren(errorBox(e));
    }
  }
  async function probeReports() {
    try {
      reportsTaken = (await fetch("v1/reports", {headers: {Accept: "application/json"}})).status === 405;
    } catch (e) {
      reportsTaken = false;
    }
  }

  // ---- wiring ------------------------------------------------------------------------
  function run() {
    const s = state();
    writeURL(s);
    return Promise.all([runWords(s.w, s.game), runRack(s.rack, s.game)]);
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const s = state();
    if (!s.w && !s.rack) {  // nothing asked: say what to type rather than do nothing
      last.words = null;
      wordsOut.replaceChildren(el("p", {class: "status empty", role: "alert"},
        "Denetlemek için kelime, denemek için taş yazın. ",
        en("Type words to check, or tiles to try.")));
      wordsInput.focus();
      return;
    }
    run();
  });
  gameSelect.addEventListener("change", () => { pairGame(); describeGame(); run(); });
  lexSelect.addEventListener("change", () => { pairLexicon(); run(); });

  async function start() {
    const s = readURL();
    wordsInput.value = s.w;
    rackInput.value = s.rack;
    await Promise.all([loadLexicons(s.lex), probeReports()]);
    await loadGames(s.game);
    if (s.lex) pairLexicon(); else pairGame();
    await run();
    document.documentElement.setAttribute("data-ready", "true");  // for tests and scripts
  }
  start();
})();
