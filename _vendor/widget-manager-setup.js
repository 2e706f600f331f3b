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
