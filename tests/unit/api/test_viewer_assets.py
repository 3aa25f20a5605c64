"""The viewer's static files: no HTML parsing of data, no inline script, vendored assets as recorded."""

from __future__ import annotations

import hashlib
import re

from fastapi import FastAPI
from fastapi.testclient import TestClient

from provgraph.api.viewer import CSP, STATIC_DIR, mount_viewer

OWN_JS = sorted((STATIC_DIR / "js").rglob("*.js"))


def test_own_scripts_never_parse_html() -> None:
    assert OWN_JS
    banned = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|DOMParser")
    found = [f"{p.name}: {m.group(0)}" for p in OWN_JS for m in banned.finditer(p.read_text(encoding="utf-8"))]
    assert found == []


def test_the_page_has_no_inline_script_style_or_handler() -> None:
    html = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, flags=re.S)
    assert scripts and all('src="/static/' in attrs and body.strip() == "" for attrs, body in scripts)
    assert not re.search(r"<style\b|\sstyle=|\son[a-z]+=", html)


def test_vendored_files_match_their_recorded_version_hash_and_licence() -> None:
    readme = (STATIC_DIR / "vendor" / "README.md").read_text(encoding="utf-8")
    row = re.search(r"`cytoscape` \(npm registry\) \| ([0-9.]+) \| MIT .*sha256 `([0-9a-f]{64})`", readme)
    assert row is not None
    bundle = STATIC_DIR / "vendor" / "cytoscape" / "cytoscape.esm.min.js"
    assert hashlib.sha256(bundle.read_bytes()).hexdigest() == row.group(2)
    assert "The Cytoscape Consortium" in (STATIC_DIR / "vendor" / "cytoscape" / "LICENSE").read_text(encoding="utf-8")
    for name, digest in re.findall(r"`swagger-ui/([a-z.-]+)` \(sha256 `([0-9a-f]{64})`\)", readme):
        assert hashlib.sha256((STATIC_DIR / "vendor" / "swagger-ui" / name).read_bytes()).hexdigest() == digest
    assert re.search(r"`swagger-ui-dist` \(npm registry\) \| 5\.35\.0 \| Apache-2\.0", readme)
    assert "Apache License" in (STATIC_DIR / "vendor" / "swagger-ui" / "LICENSE").read_text(encoding="utf-8")
    assert len(re.findall(r"`swagger-ui/([a-z.-]+)` \(sha256", readme)) == 2
    imports = {m for p in OWN_JS for m in re.findall(r'from "(/static/vendor/[^"]+)"', p.read_text(encoding="utf-8"))}
    assert imports == {"/static/vendor/cytoscape/cytoscape.esm.min.js"}
    remote = re.compile(r"""(?:from|import\(|fetch\()\s*["'](?:https?:)?//""")
    assert not [p for p in OWN_JS if remote.search(p.read_text(encoding="utf-8"))]
    assert not re.search(r"(?:src|href)=\"(?:https?:)?//", (STATIC_DIR / "index.html").read_text(encoding="utf-8"))


def test_every_page_path_serves_the_shell_with_the_csp() -> None:
    app = FastAPI()
    mount_viewer(app)
    client = TestClient(app)
    shell = (STATIC_DIR / "index.html").read_bytes()
    for path in ["/", "/login", "/ask", "/traces", "/traces/abc-123", "/documents", "/documents/urn%3Adoc%3Aa%2Fb.pdf"]:
        response = client.get(path)
        assert (response.status_code, response.content) == (200, shell), path
        assert response.headers["content-security-policy"] == CSP
        assert response.headers["x-content-type-options"] == "nosniff"
    asset = client.get("/static/js/dom.js")
    assert asset.status_code == 200 and asset.headers["content-security-policy"] == CSP
    assert client.get("/static/../viewer.py").status_code == 404
    assert client.get("/nothing-here").status_code == 404
