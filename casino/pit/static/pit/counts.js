/* Totals computed as they are typed: a float count (chip value × number of chips, in minor
   units, shown in the page's language) and a count of cards (a number per card). Integers
   only: money is never a float here either. Bound to the document, so that pages htmx swaps
   in keep it. */
(function () {
  "use strict";

  function separators() {
    var lang = document.documentElement.lang || "fr";
    var parts = new Intl.NumberFormat(lang).formatToParts(1.5);
    var decimal = parts.filter(function (p) { return p.type === "decimal"; })[0];
    return { lang: lang, decimal: decimal ? decimal.value : "," };
  }

  function money(minor) {
    var s = separators();
    var negative = minor < 0;
    var units = Math.floor(Math.abs(minor) / 100);
    var cents = Math.abs(minor) % 100;
    var whole = new Intl.NumberFormat(s.lang, { useGrouping: true }).format(units);
    return (negative ? "−" : "") + whole + s.decimal + (cents < 10 ? "0" : "") + cents;
  }

  function update(form) {
    var asMoney = form.dataset.count === "money";
    var total = 0;
    form.querySelectorAll("input[data-value]").forEach(function (input) {
      var n = parseInt(input.value, 10);
      var sub = Number.isFinite(n) && n > 0 ? n * parseInt(input.dataset.value, 10) : 0;
      total += sub;
      var cell = form.querySelector('[data-subtotal-for="' + input.name + '"]');
      if (cell) { cell.textContent = asMoney ? money(sub) : String(sub); }
    });
    form.querySelectorAll("[data-total]").forEach(function (out) {
      out.textContent = asMoney ? money(total) : String(total);
    });
  }

  function all() { document.querySelectorAll("form[data-count]").forEach(update); }

  document.addEventListener("input", function (event) {
    var form = event.target.closest && event.target.closest("form[data-count]");
    if (form) { update(form); }
  });
  document.addEventListener("DOMContentLoaded", all);
  document.addEventListener("htmx:afterSettle", all);
})();
