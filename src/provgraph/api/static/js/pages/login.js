// Log in with an API token; it is kept in sessionStorage (this browser tab's session) only.

import { api, session } from "../api.js";
import { h, isLocalPath, notice, setContent } from "../dom.js";

export function loginPage(main) {
  const input = h("input", { id: "token", name: "token", type: "password", autocomplete: "off", required: true,
    "aria-describedby": "token-help" });
  const status = h("div", { class: "status-line" });
  const form = h("form", { class: "login", "aria-label": "Log in" },
    h("h1", {}, "Log in"),
    h("label", { for: "token" }, "API token"),
    input,
    h("p", { id: "token-help", class: "muted" }, "Whoever runs this server gives you a token for your user. "
      + "It is kept for this browser tab only."),
    h("button", { type: "submit" }, "Log in"),
    status);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    session.setToken(input.value.trim());
    try {
      await api.collections();
    } catch (err) {
      session.clear();
      setContent(status, notice(err.status === 401 ? "That token is not valid." : `Could not log in: ${err.message}`, "error"));
      return;
    }
    const next = new URLSearchParams(location.search).get("next");
    location.assign(next && isLocalPath(next) ? next : "/");
  });
  setContent(main, form);
  input.focus();
}
