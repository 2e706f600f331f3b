// Runs between require.js and embed-amd.js (see nb_ipywidgets_js in _config.yml).
(function () {
  // The widget manager fetches its icon fonts from the folder of its own module, which
  // require.js places next to the page; point that folder at the fonts vendored in _static/.
  require.config({paths: {"@jupyter-widgets/html-manager/dist":
    new URL("html-manager", document.currentScript.src).href}});
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
