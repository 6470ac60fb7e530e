// Live updates: the server sends its data version (server-sent events)
// when the page connects and whenever a plan changes; a version other than
// the page's reloads the page's data in place. No framework, no network
// beyond this server.
(function () {
  "use strict";
  var main = document.querySelector("main");
  var live = document.getElementById("live");
  if (!main || !live || !window.EventSource || !window.fetch) {
    if (live) live.textContent = "Live updates need a newer browser: reload the page to see changes.";
    return;
  }
  var token = new URLSearchParams(location.search).get("token");
  var events = new EventSource("/events" + (token ? "?token=" + encodeURIComponent(token) : ""));
  var busy = false, again = false;
  function say(text) { live.textContent = text; }
  function reload() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.text(); })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, "text/html");
        var fresh = doc.querySelector("main");
        if (!fresh) throw new Error("no content");
        var hadFocus = main.contains(document.activeElement);
        main.replaceWith(fresh);
        main = fresh;
        document.title = doc.title;
        if (hadFocus) main.focus({ preventScroll: true });
        say("Live · updated at " + new Date().toLocaleTimeString());
      })
      .catch(function (e) { say("Live · could not reload the data (" + e.message + "); retrying on the next change"); })
      .finally(function () { busy = false; if (again) { again = false; reload(); } });
  }
  events.addEventListener("version", function (e) {
    if (e.data !== main.dataset.version) reload();
    else say("Live · up to date");
  });
  events.onerror = function () { say("Live updates paused: the server cannot be reached (retrying)"); };
})();
