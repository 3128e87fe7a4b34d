// waymark viewer: live updates and in-page navigation, without a framework.
// The server marks the parts of a page that can change with `data-live` and an id; on a
// "changed" server-sent event (or a click on a `data-nav` link) this fetches the page's HTML,
// parses it inertly with DOMParser, and swaps the changed parts in place. Nothing here builds
// markup from strings, so the server's escaping is all there is to trust.
(() => {
  "use strict";
  const body = document.body;
  const status = document.getElementById("live");
  let busy = false;
  let again = false;

  function setStatus(state, text) {
    if (!status) return;
    status.className = `live ${state}`;
    status.textContent = text;
  }

  function swap(doc) {
    for (const el of document.querySelectorAll("[data-live]")) {
      const next = doc.getElementById(el.id);
      if (!next || next.outerHTML === el.outerHTML) continue;
      const scrolls = new Map();
      for (const s of el.querySelectorAll("[data-keep-scroll]")) {
        scrolls.set(s.id, [s.scrollTop, s.scrollLeft]);
      }
      const fresh = document.importNode(next, true);
      el.replaceWith(fresh);
      for (const [id, [top, left]] of scrolls) {
        const s = document.getElementById(id);
        if (s) {
          s.scrollTop = top;
          s.scrollLeft = left;
        }
      }
    }
    document.title = doc.title;
    const version = doc.body && doc.body.dataset.version;
    if (version) body.dataset.version = version;
    body.dataset.refreshed = String(Number(body.dataset.refreshed || "0") + 1);
  }

  async function load(url) {
    const res = await fetch(url, { headers: { accept: "text/html" }, credentials: "same-origin" });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return new DOMParser().parseFromString(await res.text(), "text/html");
  }

  async function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      swap(await load(location.href));
    } catch {
      // the next event retries
    } finally {
      busy = false;
      if (again) {
        again = false;
        refresh();
      }
    }
  }

  function showSelected() {
    const row = document.querySelector(".graph li.sel");
    const box = document.getElementById("graph-scroll");
    if (row && box) {
      const top = row.offsetTop - box.offsetTop;
      if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 30) {
        box.scrollTop = Math.max(0, top - box.clientHeight / 2);
      }
    }
  }

  const events = body.dataset.events;
  if (events && "EventSource" in window) {
    const source = new EventSource(events);
    const onVersion = (e) => {
      if (e.data !== body.dataset.version) refresh();
    };
    source.addEventListener("version", onVersion);
    source.addEventListener("changed", onVersion);
    source.onopen = () => setStatus("on", "live");
    source.onerror = () => setStatus("off", "reconnecting…");
  }

  document.addEventListener("click", async (e) => {
    const target = e.target instanceof Element ? e.target.closest("a[data-nav]") : null;
    if (!target || e.defaultPrevented || e.button !== 0) return;
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const url = new URL(target.getAttribute("href") || "", location.href);
    if (url.origin !== location.origin) return;
    e.preventDefault();
    try {
      const doc = await load(url.href);
      history.pushState(null, "", url.href);
      swap(doc);
      if (url.hash) {
        const anchor = document.getElementById(url.hash.slice(1));
        if (anchor && matchMedia("(max-width: 1249px)").matches) anchor.scrollIntoView();
      }
    } catch {
      location.assign(url.href);
    }
  });
  addEventListener("popstate", () => refresh());
  showSelected();
})();
