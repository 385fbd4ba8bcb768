// Served as _vendor/jupyter-widgets/offline.js (the Makefile's vendor recipe), loaded by the
// pages with widgets after RequireJS and before the ipywidgets embed manager
// (nb_ipywidgets_js in _config.yml). Two fixes for a book served offline with MathJax 3:
//  1. the embed manager derives where its Font Awesome fonts live from its AMD module
//     id (@jupyter-widgets/html-manager/dist/...); map that id to the vendored copy
//     next to this file, so the fonts load from the book, not a path under the page.
//  2. ipywidgets typesets widget labels with MathJax 2's MathJax.Hub.Queue; MathJax 3
//     has no Hub, which throws. Provide a Hub.Queue that calls MathJax 3's typesetPromise.
(function () {
  "use strict";
  var here = document.currentScript.src.replace(/[?#].*$/, "").replace(/[^/]*$/, "");
  if (window.require && window.require.config) {
    window.require.config({paths: {"@jupyter-widgets/html-manager/dist": here + "html-manager"}});
  }
  var hub = {
    Queue: function () {
      for (var i = 0; i < arguments.length; i++) {
        var item = arguments[i];
        if (Array.isArray(item) && item[0] === "Typeset") {
          var element = item[2];
          var mj = window.MathJax;
          if (mj && mj.startup && mj.startup.promise && mj.typesetPromise) {
            mj.startup.promise
              .then(function () { return mj.typesetPromise(element ? [element] : undefined); })
              .catch(function (err) { console.warn("MathJax could not typeset a widget label", err); });
          }
        }
      }
    }
  };
  var mathjax = window.MathJax = window.MathJax || {};
  if (!mathjax.Hub) { mathjax.Hub = hub; }  // before MathJax 3 has loaded (the config object)
  var startup = mathjax.startup = mathjax.startup || {};
  var ready = startup.ready;
  startup.ready = function () {  // after it has loaded: the MathJax object replaces the config
    if (ready) { ready(); } else { window.MathJax.startup.defaultReady(); }
    window.MathJax.Hub = window.MathJax.Hub || hub;
  };
})();
