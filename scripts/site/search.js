// Client-side search over window.SEARCH_INDEX (written by scripts/build_site.py): every word of the query
// must occur in a section; title matches rank first. Plain script, no library, works from file://.
(function () {
  "use strict";
  var input = document.getElementById("search");
  var list = document.getElementById("search-results");
  var chapters = document.getElementById("chapter-list");
  var index = (window.SEARCH_INDEX || []).map(function (entry) {
    return { entry: entry, title: entry.title.toLowerCase(), text: entry.text.toLowerCase() };
  });

  function escapeHtml(text) {
    return text.replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; });
  }

  function snippet(text, word) {
    var at = text.toLowerCase().indexOf(word);
    var start = Math.max(0, at - 70);
    var piece = (start > 0 ? "... " : "") + text.slice(start, start + 200) + (text.length > start + 200 ? " ..." : "");
    var safe = escapeHtml(piece);
    var pattern = new RegExp("(" + word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + ")", "ig");
    return safe.replace(pattern, "<mark>$1</mark>");
  }

  function search(query) {
    var words = query.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) { return []; }
    return index.filter(function (item) {
      return words.every(function (w) { return item.title.indexOf(w) >= 0 || item.text.indexOf(w) >= 0; });
    }).map(function (item) {
      var score = words.reduce(function (s, w) {
        return s + (item.title.indexOf(w) >= 0 ? 10 : 0) + item.text.split(w).length - 1;
      }, 0);
      return { item: item, score: score };
    }).sort(function (a, b) { return b.score - a.score; }).slice(0, 30).map(function (r) { return r.item; });
  }

  function show() {
    var query = input.value.trim();
    var found = search(query);
    chapters.hidden = query.length > 0;
    list.innerHTML = !query ? "" : found.length ? found.map(function (item) {
      var e = item.entry;
      return '<li><a href="' + escapeHtml(e.url) + '">' + escapeHtml(e.title) + '</a> <span class="where">' +
        escapeHtml(e.chapter) + '</span><div class="snippet">' + snippet(e.text, query.toLowerCase().split(/\s+/)[0]) +
        "</div></li>";
    }).join("") : "<li>No section mentions all of: " + escapeHtml(query) + "</li>";
  }

  input.addEventListener("input", show);
  var asked = new URLSearchParams(window.location.search).get("q");
  if (asked) { input.value = asked; show(); }
})();
