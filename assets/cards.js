// The page's result cards: draw the server's HTML, send each button's action back to Python.
export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(".ps-cards");
  if (!root) {
    root = document.createElement("div");
    root.className = "ps-cards";
    parentElement.appendChild(root);
  }
  root.innerHTML = data.html;  // built and escaped on the server (search/cards.py)
  root.onclick = (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    // one action per click while the page reruns (a double click would add and then remove a paper)
    button.disabled = true;
    setTimeout(() => { button.disabled = false; }, 2000);
    setTriggerValue("action", { kind: button.dataset.action, id: button.dataset.id });
  };
}
