// Reloads the overview every 5 seconds while the box is ticked and the
// tab is shown; the choice is kept for the session.
(function () {
  var box = document.getElementById("refresh");
  if (!box) return;
  box.checked = sessionStorage.getItem("litequeue.refresh") !== "off";
  box.addEventListener("change", function () {
    sessionStorage.setItem("litequeue.refresh", box.checked ? "on" : "off");
  });
  setInterval(function () {
    if (box.checked && document.visibilityState === "visible") location.reload();
  }, 5000);
})();
