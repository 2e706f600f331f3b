// Runs between require.js and embed-amd.js (see nb_ipywidgets_js in _config.yml).
(function () {
  // The widget manager's modules fetch their icon fonts from their own folders, which require.js
  // places next to the page; point those folders at the fonts vendored in _static/html-manager/.
  var fonts = new URL("html-manager", document.currentScript.src).href;
  require.config({paths: {"@jupyter-widgets": fonts, "@jupyter-widgets/html-manager/dist": fonts}});
  // It typesets widget labels with MathJax 2's call MathJax.Hub.Queue; the book loads MathJax 3
  // (configured in window.MathJax before it loads), so add that one call once MathJax 3 is ready.
  var config = window.MathJax;
  if (config && !config.version) {
    var startup = config.startup = config.startup || {};
    var ready = startup.ready;
    startup.ready = function () {
      if (ready) { ready(); } else { MathJax.startup.defaultReady(); }
      MathJax.Hub = {Queue: function (job) { MathJax.typesetPromise([job[2]]); }};
    };
  }
})();
// Saved widgets, readable by screen readers: the widget manager renders a slider's handle (role
// "slider") without a name and a plot inside an output widget without alt text. Each handle is
// named by its widget's label; each plot gets an alt text saying which setting it shows; printed
// text gets a tab stop, so that a wide one can be scrolled from the keyboard.
(function () {
  function text(el) { return el ? el.textContent.trim() : ""; }
  function setting(box) {
    var parts = [];
    box.querySelectorAll(".widget-inline-hbox").forEach(function (control) {
      var name = text(control.querySelector(".widget-label"));
      var field = control.querySelector("select, input:not([type=range])");
      var value = text(control.querySelector(".widget-readout")) ||
                  (field && field.tagName === "SELECT" && field.selectedOptions.length
                   ? field.selectedOptions[0].textContent : field && field.value) || "";
      if (name || value) { parts.push((name ? name + " " : "") + value); }
    });
    return parts.join(", ");
  }
  function label() {
    document.querySelectorAll(".noUi-handle[role=slider]:not([aria-label])").forEach(function (h) {
      var control = h.closest(".widget-inline-hbox");
      h.setAttribute("aria-label", text(control && control.querySelector(".widget-label")) || "slider");
    });
    // text a saved explorer printed can be wider than its box: a tab stop lets keyboard users
    // scroll it (the theme does the same for the outputs that exist when the page loads)
    document.querySelectorAll(".widget-output pre:not([tabindex])").forEach(function (pre) {
      pre.setAttribute("tabindex", "0");
    });
    document.querySelectorAll(".widget-output img:not([alt])").forEach(function (img) {
      var box = img.closest(".widget-interact") || img.closest(".widget-vbox");
      var shown = box ? setting(box) : "";
      img.setAttribute("alt", "Plot drawn by the live explorer at its saved setting" +
                       (shown ? " (" + shown + ")" : "") + "; it redraws only in Jupyter, " +
                       "with a running kernel, when you change the controls.");
    });
  }
  new MutationObserver(label).observe(document.documentElement, {childList: true, subtree: true});
})();
