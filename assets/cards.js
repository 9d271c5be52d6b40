// The page's result cards (and a paper's reviews): draw the server's HTML, send each button's action back.
// The HTML (search/cards.py, search/display.py) is parsed in an inert document and rebuilt here node by
// node: only the elements and attributes the cards use are created, with createElement(NS), and every
// text becomes a text node. So nothing runs or links anywhere even if the server's escaping missed it.
const HTML_NS = "http://www.w3.org/1999/xhtml";
const MATHML_NS = "http://www.w3.org/1998/Math/MathML";
const HTML_TAGS = new Set(["div", "h5", "h6", "p", "br", "b", "strong", "em", "i", "ul", "ol", "li",
                           "details", "summary", "button", "a"]);
const HTML_ATTRS = new Set(["class", "data-pid", "data-action", "data-id", "open"]);
// as search/display.py's _MATHML_TAGS and _MATHML_ATTRS: elements a browser draws, no links or styles
const MATH_TAGS = new Set(("math mrow mi mn mo ms mtext mspace msup msub msubsup mfrac msqrt mroot mover " +
  "munder munderover mtable mtr mtd mstyle mpadded mphantom menclose").split(" "));
const MATH_ATTRS = new Set(("display mathvariant stretchy fence separator accent accentunder movablelimits " +
  "displaystyle scriptlevel linethickness lspace rspace width height depth columnalign rowspacing " +
  "columnspacing notation largeop symmetric minsize maxsize form").split(" "));

function element(node) {
  const tag = node.localName;
  if (node.namespaceURI === MATHML_NS && MATH_TAGS.has(tag)) {
    const el = document.createElementNS(MATHML_NS, tag);
    for (const { name, value } of node.attributes) {
      if (MATH_ATTRS.has(name)) el.setAttribute(name, value);
    }
    return el;
  }
  if (node.namespaceURI !== HTML_NS || !HTML_TAGS.has(tag)) return null;
  const el = document.createElement(tag);
  for (const { name, value } of node.attributes) {
    if (HTML_ATTRS.has(name)) el.setAttribute(name, value);
    else if (tag === "button" && name === "type") el.setAttribute("type", "button");
    else if (tag === "a" && name === "href" && /^https?:\/\//i.test(value)) el.setAttribute("href", value);
  }
  if (tag === "button") el.setAttribute("type", "button");  // never a form's submit
  if (tag === "a") {  // the OpenReview link: http(s) only, in a new tab
    el.setAttribute("target", "_blank");
    el.setAttribute("rel", "noopener noreferrer");
  }
  return el;
}

function rebuild(from, into) {
  for (const node of from.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) {
      into.appendChild(document.createTextNode(node.data));
    } else if (node.nodeType === Node.ELEMENT_NODE) {
      const el = element(node);
      if (el) {
        rebuild(node, el);
        into.appendChild(el);
      } else if (node.localName !== "script" && node.localName !== "style") {
        into.appendChild(document.createTextNode(node.textContent));  // an unknown element: its text
      }
    }
  }
  return into;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(".ps-cards");
  if (!root) {
    root = document.createElement("div");
    root.className = "ps-cards";
    parentElement.appendChild(root);
  }
  const parsed = new DOMParser().parseFromString(String(data.html ?? ""), "text/html");  // inert: runs nothing
  root.replaceChildren(rebuild(parsed.body, document.createDocumentFragment()));
  root.onclick = (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    // one action per click while the page reruns (a double click would add and then remove a paper)
    button.disabled = true;
    setTimeout(() => { button.disabled = false; }, 2000);
    setTriggerValue("action", { kind: button.dataset.action, id: button.dataset.id });
  };
}
