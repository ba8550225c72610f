// The pandoc site's behaviour (rlbook build --backend pandoc): the chapter menu on
// narrow screens, the page's contents following the reader (stepping aside while a
// figure that takes the margin passes), a copy button on every code block, "show all
// code" and "hide all code", and search with Pagefind. One classic script, no library
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
    document.querySelectorAll(".sidebar a").forEach((link) => link.addEventListener("click", () => setOpen(false)));
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

  // ---- search: Pagefind needs the book served over HTTP (it fetches its index)

  // "pass@k" names a family (pass@1, pass@4, pass@k): it is searched as the prefix "pass@", which the index
  // keeps whole (rlbook.publish.search indexes "@" as part of a word).
  let searched = [];
  function searchTerm(term) {
    const query = term.replace(/(\w)@[A-Za-z]\b/g, "$1@");
    searched = query.toLowerCase().split(/\s+/).filter(Boolean);
    return query;
  }

  // A page's sections, the best three first: those whose heading names every word searched, in the order the
  // page teaches them, then the others by how well they match. The section that teaches a term comes before
  // those that only use it.
  function bestSectionsFirst(result) {
    const score = (section) => (section.weighted_locations || []).reduce((sum, l) => sum + l.balanced_score, 0);
    const named = (section) => {
      const title = (section.title || "").toLowerCase();
      return searched.length > 0 && searched.every((word) => title.includes(word));
    };
    const top = (result.sub_results || []).filter((s) => s.url === (result.meta?.url || result.url));
    const sections = (result.sub_results || []).filter((s) => !top.includes(s));
    const others = sections.filter((s) => !named(s)).sort((a, b) => score(b) - score(a));
    const ordered = [...sections.filter(named), ...others];
    result.sub_results = [...top, ...ordered.slice(0, 3)];
    return result;
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
    const bundle = new URL(root + "pagefind/", location.href);
    const style = document.createElement("link");
    style.rel = "stylesheet";
    style.href = new URL("pagefind-ui.css", bundle).href;
    document.head.appendChild(style);
    const script = document.createElement("script");
    script.src = new URL("pagefind-ui.js", bundle).href;
    script.onload = () => {
      // eslint-disable-next-line no-undef
      new PagefindUI({
        element: "#search",
        bundlePath: bundle.href,
        baseUrl: new URL(root || "./", location.href).pathname,
        showSubResults: true,
        showImages: false,
        processTerm: searchTerm,
        processResult: bestSectionsFirst,
        // A page is a whole chapter, long or short as its subject needs: its length says nothing about how well
        // it answers a search, so a short page (the preface, the references) is not preferred for being short.
        ranking: { pageLength: 0 },
        translations: { placeholder: "Search the book" },
      });
    };
    document.head.appendChild(script);
  }

  setUpMenu();
  setUpContents();
  setUpCodeTools();
  setUpCopyButtons();
  setUpSearch();
})();
