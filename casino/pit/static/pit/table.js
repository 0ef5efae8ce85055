/* The table page, keyboard first (casino/pit/table.py). Served from the project; htmx does the
   requests and the swaps, this keeps the cards in order and the keyboard where the tailleur and
   the croupier need it. */
(function () {
  "use strict";

  function panel() { return document.getElementById("panel"); }

  /* --- the cards: typed (KS, 10H, th) then Enter, or picked; laid one request at a time, in the
     order given. The field is emptied at once, so the next card can be typed while the first is
     being laid: each code is taken when it is given, not when its turn comes. */
  var waiting = [];
  var laying = false;

  function layNext() {
    if (laying || !waiting.length) { return; }
    laying = true;
    var form = document.getElementById("card-form");
    // The round the card goes to: the coup (Trente-et-Quarante) or the taille (Pharao).
    var round = document.getElementById("coup-id") || document.getElementById("taille-id");
    var values = { code: waiting.shift() };
    if (round) { values[round.name] = round.value; }
    var done = function () { laying = false; layNext(); };
    htmx.ajax("POST", form.getAttribute("data-url"), {
      source: form,
      target: "#panel",
      swap: "innerHTML",
      values: values
    }).then(done, done);
  }

  function give(code) {
    code = (code || "").trim();
    if (code) { waiting.push(code); layNext(); }
  }

  document.addEventListener("submit", function (event) {
    if (event.target.id !== "card-form") { return; }
    event.preventDefault();
    var input = event.target.querySelector("input[name=code]");
    give(input.value);
    input.value = "";
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".picker button[data-code]");
    if (button) { give(button.getAttribute("data-code")); }
  });

  /* --- the poll: the panel follows the others' acts every two seconds, unless someone is typing
     in it (the spoken announcement, the undealt cards, a reason: a swap would take the words
     from under their fingers). Its answer is dropped when an act of this page began after it
     was asked, or is still under way: the act's own answer is newer. */
  var acts = 0;
  var actsUnderWay = 0;
  var actsWhenPolled = 0;

  window.pitIdle = function () {
    var active = document.activeElement;
    var p = panel();
    return !(active && p && p.contains(active) && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName));
  };

  /* What the page last saw of the panel: the poll answers 204 when nothing changed. */
  window.pitSeen = function () {
    var body = document.getElementById("panel-body");
    return body ? body.getAttribute("data-digest") : "";
  };

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt === panel()) {
      actsWhenPolled = acts;
      return;
    }
    acts += 1;
    actsUnderWay += 1;
    // Counted off by the request itself: an act's button is often swapped out of the page by
    // its own answer, and its htmx events then no longer reach the document.
    event.detail.xhr.addEventListener("loadend", function () { actsUnderWay -= 1; });
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt;
    var done = event.detail.xhr && event.detail.xhr.status < 300;
    if (form && form.id === "seat-form" && done) {
      // The next player to seat: the seat first, as the croupier reads it at the table.
      form.reset();
      form.querySelector("[name=seat]").focus();
    }
    if (form && form.id === "stake-form" && done) {
      form.querySelector("[name=amount]").value = "";
      form.querySelector("[name=holder]").value = "";
      form.querySelector("[name=holder]").focus();
    }
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    // Signed out (the session ended): the login page is the whole page's, not the panel's.
    var xhr = event.detail.xhr;
    if (xhr && xhr.responseURL && xhr.responseURL.indexOf("/admin/login/") >= 0) {
      event.detail.shouldSwap = false;
      window.location.assign(xhr.responseURL);
      return;
    }
    // The swap's event is the target's (the panel for every act): the poll is known by its source.
    var config = event.detail.requestConfig;
    var polled = config && config.elt === panel();
    // Nor while the person types in the panel: a poll sent before he began would take his field
    // from under his fingers (the next poll, once he is done, brings the same news).
    if (polled && (actsUnderWay > 0 || acts !== actsWhenPolled || !window.pitIdle())) {
      event.detail.shouldSwap = false;
    }
  });

  /* A part of the panel a person opened (a stake's acts, the banker's approval: ``data-keep``)
     stays open when the panel is swapped: another person's act must not close it under them. */
  var kept = [];

  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.target !== panel()) { return; }
    kept = Array.prototype.map.call(
      panel().querySelectorAll("details[open][data-keep]"),
      function (details) { return details.getAttribute("data-keep"); }
    );
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target !== panel()) { return; }
    kept.forEach(function (key) {
      var details = panel().querySelector('details[data-keep="' + key + '"]');
      if (details) { details.open = true; }
    });
  });

  /* What was typed in the panel's fields marked ``data-keep-value`` is put back after a swap: a
     cercle's hands after any swap (a refused deal shows why, and the croupier corrects, not
     retypes); a stake's amount (``data-keep-value="until-its-act"``) after any swap but the answer
     to an act sent from its own form. The poll waits while he types, but not once his pointer is
     on the button (a press moves the keyboard off the field): a swap landing between the press and
     the click emptied the field, and his click sent nothing (a croupier's reduction was refused:
     "'' n'est pas un montant"). After his own act on that stake the field is empty again. */
  var typed = {};

  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.target !== panel()) { return; }
    typed = {};
    var config = event.detail.requestConfig;
    var source = config && config.elt;
    var actOf = function (input) {
      return source && source !== panel() && input.form && input.form.contains(source);
    };
    panel().querySelectorAll("[data-keep-value][id]").forEach(function (input) {
      var untilItsAct = input.getAttribute("data-keep-value") === "until-its-act";
      if (input.value && !(untilItsAct && actOf(input))) { typed[input.id] = input.value; }
    });
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target !== panel()) { return; }
    Object.keys(typed).forEach(function (id) {
      var input = document.getElementById(id);
      if (input && input.hasAttribute("data-keep-value") && !input.value) {
        input.value = typed[id];
        countCodes(input);
      }
    });
    typed = {};
  });

  /* A refusal that names the field at fault (its ``where``, as the API says it): the panel's
     field of that name is marked, and the keyboard goes there (``nextAct``). */
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.detail.target !== panel()) { return; }
    var said = document.getElementById("said");
    var where = said ? said.getAttribute("data-where") : null;
    if (!where) { return; }
    var fields = Array.prototype.filter.call(
      panel().querySelectorAll("[data-where]"),
      function (field) {
        var name = field.getAttribute("data-where");
        return where === name || where.indexOf(name + "[") === 0;
      }
    );
    fields.forEach(function (field) { field.classList.add("at-fault"); });
  });

  /* A cercle's cards typed in a field: how many of how many, as they are typed. */
  function countCodes(input) {
    var out = input.parentNode && input.parentNode.querySelector(".codes-count");
    if (!out) { return; }
    var n = input.value.split(/[\s,;]+/).filter(function (code) { return code; }).length;
    var want = input.getAttribute("data-want");
    out.textContent = n + "/" + want;
    out.classList.toggle("complete", String(n) === want);
    out.classList.toggle("over", n > parseInt(want, 10));
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("input.codes[data-want]")) {
      countCodes(event.target);
    }
  });

  /* The cutter is the player on the dealer's left: offered again when the dealer changes (the
     service checks it all the same). */
  document.addEventListener("change", function (event) {
    if (event.target.id !== "deal-dealer") { return; }
    var chosen = event.target.options[event.target.selectedIndex];
    var cutter = document.getElementById("deal-cutter");
    if (chosen && cutter) { cutter.value = chosen.getAttribute("data-left"); }
  });

  /* --- where the keyboard goes for the next act, by the phase of the coup and the person's post
     at the table: the tailleur opens the coup, closes the betting, types the cards; the croupier
     types the stakes; either confirms the settlement. */
  /* At a cercle (Alliance) the croupier records the deal: the next act by the deal's phase. */
  var CERCLE = {
    none: "#open-deal",
    dealing: "#hand-0",
    auction: "#call-form button",
    contract: "#contract-form input",
    play: "#play-code"
  };

  function nextAct() {
    // A field a refusal named comes first: the act is that field's, corrected.
    var faults = panel() ? panel().querySelectorAll(".at-fault") : [];
    if (faults.length) { return faults[faults.length - 1]; }
    var body = document.getElementById("panel-body");
    var phase = body ? body.getAttribute("data-phase") : "";
    var page = document.querySelector(".table-page");
    if (page && page.classList.contains("alliance")) {
      return CERCLE[phase] ? document.querySelector(CERCLE[phase]) : null;
    }
    var posts = page ? page.getAttribute("data-posts") || "" : "";
    var tailleur = posts.indexOf("tailleur") >= 0;
    var croupier = posts.indexOf("croupier") >= 0;
    var ids = [];
    if (document.getElementById("settle-confirm")) {
      ids = ["settle-confirm"];
    } else if (phase === "betting") {
      ids = tailleur ? ["close-betting"] : croupier ? ["stake-holder"] : [];
    } else if (phase === "closed" || phase === "dealing" || phase === "drawing") {
      ids = tailleur ? ["card-code"] : [];
    } else if (phase === "between") {
      // Pharao, between draws: the tailleur lays the next draw, the croupier takes the stakes.
      ids = tailleur ? ["card-code"] : croupier ? ["stake-holder"] : [];
    } else if (tailleur) {
      ids = ["open-coup", "undealt", "bottom-code"];
    }
    for (var i = 0; i < ids.length; i++) {
      var element = document.getElementById(ids[i]);
      if (element) { return element; }
    }
    return null;
  }

  function goToNextAct() {
    var element = nextAct();
    if (element) { element.focus(); }
  }

  /* After the panel changes, the keyboard goes to the next act, unless the person is busy
     elsewhere (a stake or a card being typed). */
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.detail.target !== panel()) { return; }
    var active = document.activeElement;
    if (active && active !== document.body && !panel().contains(active)) { return; }
    goToNextAct();
  });

  /* Escape: to the next act, from anywhere on the page. */
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && document.querySelector(".table-page")) {
      event.preventDefault();
      goToNextAct();
    }
  });

  document.addEventListener("DOMContentLoaded", goToNextAct);
})();
