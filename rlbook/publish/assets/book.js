// The pandoc site's behaviour (rlbook build --backend pandoc): the chapter menu on
// narrow screens, the light and dark toggle, the page's contents following the reader
// (stepping aside while a figure that takes the margin passes), a copy button on every
// code block, "show all code" and "hide all code", a shaded edge on every box that
// scrolls sideways, room for the long text of a table that scrolls on a phone, and
// search over Pagefind's index. One classic script, no library
// of its own, so that it also runs from file://.
"use strict";

(function () {
  const root = document.body.dataset.root || "";

  // ---- the chapter list behind the "Contents" button (narrow screens)
  function setUpMenu() {
    const button = document.querySelector(".menu-toggle");
    if (!button) return;
    const setOpen = (open) => {
      document.body.classList.toggle("nav-open", open);
      button.setAttribute("aria-expanded", String(open));
    };
    button.addEventListener("click", () => setOpen(!document.body.classList.contains("nav-open")));
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape") setOpen(false);
    });
    // Any link in the chapter list closes it, search results included (they are added later).
    const sidebar = document.getElementById("sidebar");
    if (sidebar) sidebar.addEventListener("click", (event) => { if (event.target.closest("a")) setOpen(false); });
  }

  // ---- light or dark: the page follows the system setting until the reader presses the toggle. The choice is
  // kept in localStorage for every page of the book; the page's head applies it before the page is drawn
  // (assets/book.html). A choice that agrees with the system is no choice: the page follows the system again.
  const SCHEME_KEY = "rlbook-scheme";

  function setUpSchemeToggle() {
    const html = document.documentElement;
    const system = window.matchMedia("(prefers-color-scheme: dark)");
    const meta = document.querySelector('meta[name="color-scheme"]');
    const buttons = [...document.querySelectorAll(".scheme-toggle")];
    const systemScheme = () => (system.matches ? "dark" : "light");
    const current = () => html.dataset.scheme || systemScheme();
    const show = () => buttons.forEach((button) => button.setAttribute("aria-pressed", String(current() === "dark")));
    const apply = (scheme) => {
      if (scheme === "light" || scheme === "dark") html.dataset.scheme = scheme;
      else delete html.dataset.scheme;
      if (meta) meta.content = html.dataset.scheme || "light dark";
      show();
    };
    buttons.forEach((button) => button.addEventListener("click", () => {
      const next = current() === "dark" ? "light" : "dark";
      const chosen = next === systemScheme() ? null : next;
      try {
        if (chosen) localStorage.setItem(SCHEME_KEY, chosen);
        else localStorage.removeItem(SCHEME_KEY);
      } catch (error) { /* storage refused: the choice holds for this page only */ }
      apply(chosen);
    }));
    system.addEventListener("change", show);
    // Another tab of the book changed the scheme: this one follows.
    window.addEventListener("storage", (event) => { if (event.key === SCHEME_KEY) apply(event.newValue); });
    show();
  }

  // ---- the page's contents: the section being read is marked
  function setUpContents() {
    const toc = document.getElementById("TOC");
    if (!toc) return;
    // Beside the text on wide screens the list stays open; above it, it starts folded.
    const wide = window.matchMedia("(min-width: 1200px)");
    const box = toc.querySelector("details");
    const fold = () => { if (box) box.open = wide.matches; };
    wide.addEventListener("change", fold);
    fold();
    const entries = [];
    toc.querySelectorAll('a[href^="#"]').forEach((link) => {
      const target = document.getElementById(decodeURIComponent(link.hash.slice(1)));
      if (target) entries.push({ link, target });
    });
    if (!entries.length) return;
    let current = null;
    const mark = () => {
      const line = Math.min(window.innerHeight * 0.3, 160);
      let reading = entries[0];
      for (const entry of entries) {
        if (entry.target.getBoundingClientRect().top <= line) reading = entry;
        else break;
      }
      if (reading === current) return;
      if (current) {
        current.link.classList.remove("active");
        current.link.removeAttribute("aria-current");
      }
      current = reading;
      current.link.classList.add("active");
      current.link.setAttribute("aria-current", "location");
      if (toc.scrollHeight > toc.clientHeight) {
        const box = toc.getBoundingClientRect();
        const at = current.link.getBoundingClientRect();
        if (at.top < box.top || at.bottom > box.bottom) toc.scrollTop += at.top - box.top - box.height / 3;
      }
    };
    // A figure that takes the margin would run under the contents: they step aside while it is beside them.
    const wideFigures = [...document.querySelectorAll("figure.figure-wide")];
    const stepAside = () => {
      if (!wide.matches || !wideFigures.length) { toc.classList.remove("covered"); return; }
      const list = toc.getBoundingClientRect();
      const covered = wideFigures.some((figure) => [...figure.querySelectorAll("img")].some((img) => {
        const r = img.getBoundingClientRect();
        return r.right > list.left && r.bottom > list.top && r.top < Math.min(list.bottom, window.innerHeight);
      }));
      toc.classList.toggle("covered", covered);
    };
    let pending = false;
    const schedule = () => {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(() => {
        pending = false;
        mark();
        stepAside();
      });
    };
    window.addEventListener("scroll", schedule, { passive: true });
    window.addEventListener("resize", schedule);
    mark();
    stepAside();
  }

  // ---- "Show all code" and "Hide all code": every folded cell opened or closed at once
  function setUpCodeTools() {
    const folds = [...document.querySelectorAll("main details.code-fold")];
    if (!folds.length) return;
    const tools = document.createElement("div");
    tools.className = "code-tools";
    tools.setAttribute("role", "group");
    tools.setAttribute("aria-label", "The page's code");
    for (const [text, open] of [["Show all code", true], ["Hide all code", false]]) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = text;
      button.addEventListener("click", () => folds.forEach((fold) => { fold.open = open; }));
      tools.appendChild(button);
    }
    const main = document.querySelector("main");
    const after = main.querySelector(".notebook-download") || main.querySelector("h1");
    if (after) after.after(tools);
    else main.prepend(tools);
  }

  // ---- a copy button on every code block (not on outputs)
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    return done ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function setUpCopyButtons() {
    document.querySelectorAll("main pre > code").forEach((code) => {
      const pre = code.parentElement;
      if (pre.classList.contains("cell-output") || pre.closest(".cell-output")) return;
      let box = pre.parentElement;
      if (!box.classList.contains("sourceCode")) {
        box = document.createElement("div");
        pre.replaceWith(box);
        box.appendChild(pre);
      }
      box.classList.add("code-block");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "copy-button";
      button.textContent = "Copy";
      button.setAttribute("aria-label", "Copy the code to the clipboard");
      button.addEventListener("click", () => {
        copyText(code.innerText.replace(/\n$/, "")).then(
          () => { button.textContent = "Copied"; button.classList.add("copied"); },
          () => { button.textContent = "Select and copy"; },
        );
        window.setTimeout(() => { button.textContent = "Copy"; button.classList.remove("copied"); }, 1800);
      });
      box.appendChild(button);
    });
  }

  // ---- a box that scrolls sideways says so: a wide table, a long line of code or a long formula (on a phone,
  // most of them), and the table of chapter 3's live advantages panel, sits in a frame whose shaded edge shows
  // where more is hidden (.scroll-frame in book.css), and can be scrolled from the keyboard. A box is framed once
  // it is found to scroll, and measured again whenever its size or its content's changes (a phone turned, a fold
  // opened, the panel's table rebuilt). The workshop builds its panels after this script has run: a box that
  // appears in one later is watched from then on.
  function setUpScrollCues() {
    const scrolls = (box) =>
      /auto|scroll/.test(getComputedStyle(box).overflowX) && box.scrollWidth > box.clientWidth + 1;
    const kind = (box) => {
      if (box.matches(".table-scroll")) return "table";
      if (box.matches(".display-math")) return "math";
      if (box.matches(".rw-scroll")) return "panel";
      if (box.localName === "math") return "inline";
      return box.matches(".cell-output, .cell-output pre") ? "output" : "code";
    };
    const frameOf = (box) => {
      const parent = box.parentElement;
      if (parent.classList.contains("scroll-frame")) return parent;
      const frame = document.createElement(parent.closest("p") ? "span" : "div");
      frame.className = `scroll-frame ${kind(box)}`;
      box.before(frame);
      frame.appendChild(box);
      box.addEventListener("scroll", () => measure(box), { passive: true });
      return frame;
    };
    const measure = (box) => {
      const over = scrolls(box);
      if (!over && !box.parentElement.classList.contains("scroll-frame")) return;
      const frame = frameOf(box);
      frame.classList.toggle("more-left", over && box.scrollLeft > 1);
      frame.classList.toggle("more-right", over && box.scrollLeft + box.clientWidth < box.scrollWidth - 1);
      box.classList.toggle("scroll-box", over);
      if (over) box.tabIndex = 0;
      else box.removeAttribute("tabindex");
    };
    // What is watched: each box, and the content of a panel's box, whose table grows and shrinks inside it.
    const boxOf = new Map();
    const watch = new ResizeObserver((entries) => entries.forEach((entry) => measure(boxOf.get(entry.target))));
    const follow = (box) => {
      if (boxOf.has(box)) return;
      boxOf.set(box, box);
      watch.observe(box);
      if (box.matches(".rw-scroll") && box.firstElementChild) {
        boxOf.set(box.firstElementChild, box);
        watch.observe(box.firstElementChild);
      }
    };
    [...document.querySelectorAll("main pre, main .table-scroll, main .display-math, main math")]
      .filter((box) => !box.closest(".rlbook-workshop") && !(box.localName === "math" && box.closest(".display-math")))
      .forEach(follow);
    const panels = new MutationObserver((changes) => changes.forEach((change) => change.addedNodes.forEach((node) => {
      if (node.nodeType !== Node.ELEMENT_NODE) return;
      if (node.matches(".rw-scroll")) follow(node);
      node.querySelectorAll(".rw-scroll").forEach(follow);
    })));
    document.querySelectorAll("main .rlbook-workshop").forEach((workshop) => {
      workshop.querySelectorAll(".rw-scroll").forEach(follow);
      panels.observe(workshop, { childList: true, subtree: true });
    });
    window.addEventListener("load", () => new Set(boxOf.values()).forEach((box) => measure(box)));
  }

  // ---- on a phone, a table that scrolls sideways anyway gives its cells of long text the room to be read in a
  // few lines (.long-text in book.css) instead of a column as narrow as the longest word, whose rows would
  // grow hundreds of pixels tall. A cell counts as long text from LONG_CELL characters as a reader sees them (a
  // formula's TeX source, which MathML keeps beside it for screen readers, is not counted).
  const LONG_CELL = 40;

  function markLongCells() {
    const shownLength = (cell) => {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT, {
        acceptNode: (node) => (node.parentElement.closest("annotation") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
      });
      let text = "";
      for (let node = walker.nextNode(); node; node = walker.nextNode()) text += node.data;
      return text.replace(/\s+/g, " ").trim().length;
    };
    document.querySelectorAll("main .table-scroll td, main .table-scroll tbody th").forEach((cell) => {
      if (shownLength(cell) >= LONG_CELL) cell.classList.add("long-text");
    });
  }

  // ---- search: the book's own search box over Pagefind's index (rlbook.publish.search writes it). Pagefind
  // finds the pages and their sections; this box asks it only for the words that carry the question, keeps
  // only the pages and sections that hold every one of them, and lists each page's best sections first.
  // Pagefind fetches its index, so search needs the book served over HTTP.

  // Words that only shape a question ("why do we divide by the standard deviation?"): searched for, they would
  // match every heading that holds them ("Why this chapter matters") and outrank the words that matter.
  const STOP_WORDS = new Set((
    "a about an and are as at be by can could did do does doing for from had has have how i if in into is it its " +
    "me my of on or our should so than that the their them then there these they this those to us was we were " +
    "what when where which while who whom why will with would you your"
  ).split(" "));

  // Endings that a word of the text may vary in ("divide" finds "divided" and "dividing"; "normalisation" finds
  // "normalised"), longest first. Pagefind, given a word that no page holds, searches a shorter one instead
  // ("markdown" finds "mark"); a word of the text counts only when it begins with the searched word less one
  // of these endings.
  const ENDINGS = ["isations", "izations", "isation", "ization", "ations", "ation", "ments", "ising", "izing",
    "ment", "ness", "ings", "ised", "ized", "ises", "izes", "ing", "ise", "ize", "ies", "ied", "ers", "er", "ed",
    "es", "ly", "s", "y", "e"].sort((a, b) => b.length - a.length);
  const stemOf = (word) => {
    const ending = ENDINGS.find((e) => word.endsWith(e) && word.length - e.length >= 3);
    return ending ? word.slice(0, -ending.length) : word;
  };
  // A word as it is compared: lower case, without the punctuation around it ("deviation?" is "deviation").
  const bare = (word) => word.toLowerCase().replace(/^[^\p{L}\p{N}@]+|[^\p{L}\p{N}@]+$/gu, "");
  // A word of the text and its parts ("end-of-turn": end, of, turn; "group’s": group, s).
  const partsOf = (word) => {
    const whole = bare(word);
    return [whole, ...whole.split(/[^\p{L}\p{N}@_]+/u)];
  };

  // The words searched: "pass@k" names a family (pass@1, pass@4, pass@k) and is searched as "pass@", which the
  // index keeps whole (rlbook.publish.search indexes "@" as part of a word); the words that only shape a
  // question are dropped, unless nothing else is left.
  function searchWords(text) {
    const words = text.replace(/(\w)@[A-Za-z]\b/g, "$1@").split(/\s+/).map(bare).filter(Boolean);
    const content = words.filter((word) => !STOP_WORDS.has(word));
    return [...new Set(content.length ? content : words)];
  }

  // A result of Pagefind's, checked against the words searched: null when the page lacks one of them, else the
  // page and its best three sections. Sections whose heading names every word come first, in the order the
  // page teaches them (the section that teaches a term before those that only use it); then the others, by
  // how many of the words they hold and then by Pagefind's weighted score (a heading weighs more than text).
  function checked(data, words) {
    const text = data.content.split(/[\r\n\s]+/g);
    const stems = words.map(stemOf);
    const holds = (word, i) => partsOf(word).some((part) => part.startsWith(stems[i]));
    const found = (locations) => {
      const held = new Set();
      for (const location of locations) stems.forEach((_, i) => { if (holds(text[location] || "", i)) held.add(i); });
      return held;
    };
    if (found(data.locations).size < words.length) return null;
    const page = data.meta?.url || data.url;
    const title = data.meta?.title;
    const own = (section) => section.url === page || section.title === title;  // the page itself, or its title
    const sections = (data.sub_results || []).filter((section) => !own(section)).map((section, order) => {
      const held = found(section.locations);
      const named = stems.every((_, i) => (section.title || "").split(/\s+/).some((word) => holds(word, i)));
      const score = (section.weighted_locations || [])
        .filter((l) => found([l.location]).size)
        .reduce((sum, l) => sum + l.balanced_score, 0);
      return { section, order, named, held: held.size, score };
    }).filter((s) => s.held > 0);
    sections.sort((a, b) =>
      (b.named - a.named) || (a.named ? a.order - b.order : (b.held - a.held) || (b.score - a.score)));
    return { data, sections: sections.slice(0, 3).map((s) => s.section) };
  }

  function setUpSearch() {
    const box = document.getElementById("search");
    if (!box) return;
    if (location.protocol === "file:") {
      const note = document.createElement("p");
      note.className = "search-offline";
      note.innerHTML = "Search works when the book is served: <code>python -m http.server -d _book</code>, " +
        "then open <code>http://localhost:8000</code>.";
      box.appendChild(note);
      return;
    }
    const make = (tag, className, text) => {
      const element = document.createElement(tag);
      if (className) element.className = className;
      if (text !== undefined) element.textContent = text;
      return element;
    };
    const input = make("input", "search-input");
    Object.assign(input, { type: "search", placeholder: "Search the book", autocomplete: "off", spellcheck: false });
    input.setAttribute("aria-label", "Search the book");
    input.setAttribute("autocapitalize", "none");
    input.setAttribute("enterkeyhint", "search");
    const drawer = make("div", "search-drawer");
    drawer.hidden = true;
    const message = make("p", "search-message");
    message.setAttribute("role", "status");
    const list = make("ol", "search-results");
    drawer.append(message, list);
    box.append(input, drawer);

    let pagefind = null;
    const load = () => {
      if (!pagefind) {
        const bundle = new URL(root + "pagefind/", location.href);
        pagefind = import(new URL("pagefind.js", bundle).href).then(async (module) => {
          // A page is a whole chapter, long or short as its subject needs: its length says nothing about how
          // well it answers a search, so a short page (the preface, the references) is not preferred for it.
          await module.options({ baseUrl: new URL(root || "./", location.href).pathname, ranking: { pageLength: 0 } });
          return module;
        });
      }
      return pagefind;
    };
    const entry = (className, href, title, excerpt) => {
      const item = make("div", className);
      const heading = make("p", "search-result-title");
      const link = make("a", "search-result-link", title);
      link.href = href;
      heading.appendChild(link);
      item.appendChild(heading);
      if (excerpt) {
        const quote = make("p", "search-result-excerpt");
        quote.innerHTML = excerpt;  // Pagefind's excerpt: the page's text, escaped, with <mark> around the words
        item.appendChild(quote);
      }
      return item;
    };
    const show = (results, typed) => {
      list.replaceChildren(...results.map(({ data, sections }) => {
        const item = make("li", "search-result");
        const title = data.meta?.title || data.url;
        const page = entry("search-result-page", data.url, title, sections.length ? "" : data.excerpt);
        item.append(page, ...sections.map((s) => entry("search-result-section", s.url, s.title, s.excerpt)));
        return item;
      }));
      const count = results.length;
      message.textContent = `${count ? count : "No"} result${count === 1 ? "" : "s"} for “${typed}”`;
    };

    let asked = 0;
    let timer = null;
    const run = async () => {
      const typed = input.value.trim();
      const ask = ++asked;
      if (!typed) { drawer.hidden = true; list.replaceChildren(); message.textContent = ""; return; }
      drawer.hidden = false;
      message.textContent = "Searching…";
      const words = searchWords(typed);
      try {
        const module = await load();
        const search = words.length ? await module.search(words.join(" ")) : null;
        const pages = await Promise.all((search?.results || []).map((result) => result.data()));
        if (ask !== asked) return;  // the reader has typed on: a newer search answers
        show(pages.map((data) => checked(data, words)).filter(Boolean), typed);
      } catch (error) {
        if (ask === asked) message.textContent = "Search could not load its index.";
        throw error;
      }
    };
    input.addEventListener("input", () => {
      window.clearTimeout(timer);
      timer = window.setTimeout(run, 200);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") { window.clearTimeout(timer); run(); }
      if (event.key === "Escape") { input.value = ""; run(); }
    });
    input.addEventListener("focus", () => { if (input.value.trim()) drawer.hidden = false; });
    // A result opened, or a click elsewhere on the page: the drawer closes, and the search stays in the box.
    list.addEventListener("click", (event) => { if (event.target.closest("a")) drawer.hidden = true; });
    document.addEventListener("click", (event) => { if (!box.contains(event.target)) drawer.hidden = true; });
  }

  setUpMenu();
  setUpSchemeToggle();
  setUpContents();
  setUpCodeTools();
  setUpCopyButtons();
  markLongCells();
  setUpScrollCues();
  setUpSearch();
})();
