// cz web's only script (served from this server: the CSP allows nothing inline).
// "Copy" buttons copy the box they name; a form marked data-thinking says so while its
// answer is on the way (the Chair thinking, the proof of work, the league asked).
"use strict";
document.addEventListener("click", (event) => {
  const button = event.target.closest("button.copy");
  if (!button) return;
  const box = document.getElementById(button.dataset.copy);
  if (!box) return;
  box.select();
  const done = () => { button.textContent = "Copied ✓"; };
  if (navigator.clipboard) {
    navigator.clipboard.writeText(box.value).then(done, () => { document.execCommand("copy"); done(); });
  } else {
    document.execCommand("copy");
    done();
  }
});
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!form.dataset.thinking) return;
  document.body.classList.add("thinking");
  const note = document.createElement("p");
  note.className = "thinking-note";
  note.id = "thinking";
  note.textContent = form.dataset.thinking;
  document.querySelector("main").prepend(note);
  form.querySelectorAll("button").forEach((b) => { b.disabled = true; });
  if (event.submitter && event.submitter.name) {  // a disabled button sends no value
    const kept = document.createElement("input");
    kept.type = "hidden";
    kept.name = event.submitter.name;
    kept.value = event.submitter.value;
    form.appendChild(kept);
  }
});
