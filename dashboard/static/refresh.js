// Reloads a list every 5 seconds while the box is ticked and the tab is
// shown, unless a row is selected or a field is being filled in; the
// choice is remembered in localStorage. On the jobs list, the box in the
// header selects every row.
(function () {
  var all = document.getElementById("select-all");
  if (all) {
    all.addEventListener("change", function () {
      document.querySelectorAll("input.select").forEach(function (b) { b.checked = all.checked; });
    });
  }
  var box = document.getElementById("refresh");
  if (!box) return;
  box.checked = localStorage.getItem("litequeue.refresh") !== "off";
  box.addEventListener("change", function () {
    localStorage.setItem("litequeue.refresh", box.checked ? "on" : "off");
  });
  function busy() {
    var f = document.activeElement;
    return (f && f !== box && (f.tagName === "INPUT" || f.tagName === "SELECT")) || document.querySelector("input.select:checked");
  }
  setInterval(function () {
    if (box.checked && document.visibilityState === "visible" && !busy()) location.reload();
  }, 5000);
})();
