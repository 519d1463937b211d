# Builds benches/data/secrets/*.tsv from three independent public test suites:
#  - secretlint (MIT): packages/@secretlint/secretlint-rule-*/test/snapshots/ng.*/ (input + output.json ranges)
#    and ok.*/ inputs (clean);
#  - Yelp detect-secrets (Apache-2.0): tests/plugins/*_test.py positive payloads;
#  - Nosey Parker (Apache-2.0): the `examples` of its built-in rules.
# Each secret line appears raw and inside one English and one Chinese sentence
# (templates fixed here, chosen by a hash of the secret, written before any measurement).
# Usage: python3 build_corpus.py OUT_DIR (needs both repositories' snapshots,
# fetched with the tool library's `fetch`, at the paths below; PyYAML and regex).
import json, subprocess, sys, re, hashlib, ast, pathlib

SL = "/work/.mirror/secretlint+secretlint/repo"
DS = "/work/.mirror/Yelp+detect-secrets/repo"
out = pathlib.Path(sys.argv[1])

def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True).stdout

SKIP_SL = {"secretlint-rule-no-homedir", "secretlint-rule-no-dotenv", "secretlint-rule-pattern",
           "secretlint-rule-example", "secretlint-rule-filter-comments", "test", ".scaffdog",
           "secretlint-rule-no-k8s-kind-secret", "secretlint-rule-preset-recommend"}

EN = ["Note for later: {s}", "The deploy script uses {s} — keep it handy.", "FYI the staging config has {s}"]
ZH = ["記一下：{s}", "部署腳本裡用的是 {s}，之後要換掉", "测试环境配置：{s}，别外传"]

def value_of(secret):
    """The credential inside a reported range: a URL's password, or the value
    of a `LABEL = value` range (the label is not secret)."""
    secret = secret.rstrip("\"';,")
    m = re.match(r"^(?:jdbc:)?[a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:(.+)@[^@\s]+$", secret)
    if m:
        return m.group(1)
    m = re.match(r"^[A-Za-z_][A-Za-z0-9_.-]*\s*[=:]\s*['\"]?([^'\"]+)['\"]?$", secret)
    if m and len(m.group(1)) >= 8:
        return m.group(1)
    return secret


def contexts(line, secret):
    h = int(hashlib.sha1(secret.encode()).hexdigest(), 16)
    return [line, EN[h % 3].format(s=line), ZH[(h // 3) % 3].format(s=line)]

# Some fixtures use placeholder values (`AKIAZZZZZZZZZZZZZZZZ`,
# `sk_live_AAAA…`, `AP6xxxxxxxxxx`), which docs/SEMANTICS.md says a redactor
# must leave alone. Their format is kept and each placeholder run is replaced
# by random characters of the same class (seeded by the sample, so the file
# is reproducible). A private-key JSON's secret is the key body's first line.
import random
placeholder = re.compile(r"x{4,}|X{4,}|\*{4,}|([A-Za-z0-9])\1{7,}")

def realistic(sample):
    rng = random.Random(hashlib.sha1(sample.encode()).hexdigest())
    def fill(m):
        run = m.group(0)
        pool = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567" if run[0].isupper() else (
            "abcdefghijklmnopqrstuvwxyz0123456789" if run[0].islower() else
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return "".join(rng.choice(pool) for _ in run)
    return placeholder.sub(fill, sample)

rows = []
files = git(SL, "ls-tree", "-r", "HEAD", "--name-only").split("\n")
for f in files:
    if not (f.endswith("output.json") and "/snapshots/ng." in f):
        continue
    pkg = f.split("/")[2]
    if pkg in SKIP_SL:
        continue
    d = f.rsplit("/", 1)[0]
    j = json.loads(git(SL, "show", "HEAD:" + f) or "{}")
    src = j.get("sourceContent")
    if not isinstance(src, str) or j.get("sourceContentType") != "text":
        continue
    b = src  # ranges are JS string indices (UTF-16); our inputs are ASCII here
    for m in j.get("messages", []):
        s, e = m["range"]
        # Some rules report ranges relative to their match: prefer the key
        # the message names, where it occurs in the source.
        named = [(m.get("data") or {}).get("KEY"), m.get("message", "").rsplit(": ", 1)[-1]]
        secret = next((k for k in named if isinstance(k, str) and len(k) >= 8 and k in b), b[s:e])
        s = b.find(secret) if secret in b else s
        e = s + len(secret)
        if len(secret) < 8 or "\n" in secret.strip():
            # multi-line (keys) are kept whole as the text
            pass
        # the line(s) holding the secret
        ls = b.rfind("\n", 0, s) + 1
        le = b.find("\n", e)
        le = len(b) if le < 0 else le
        line = b[ls:le].strip()
        if m.get("messageId") in ("AWSAccountID", "AzureTenantId", "AzureClientId"):
            continue  # identifiers, not credentials
        secret = value_of(secret)
        fmt = pkg.replace("secretlint-rule-", "") + "/" + m.get("messageId", "?")
        if (m.get("data") or {}).get("typeName"):
            fmt += "/" + m["data"]["typeName"]
        for text in contexts(line, secret):
            rows.append(("secretlint", fmt, text, secret))

# detect-secrets positives: payload strings flagged True; the secret is the
# longest run of token characters in the payload (>= 12).
for f in git(DS, "ls-tree", "-r", "HEAD", "--name-only").split("\n"):
    if not (f.startswith("tests/plugins/") and f.endswith("_test.py")):
        continue
    plugin = f.rsplit("/", 1)[1][:-8]
    if plugin in ("base", "high_entropy_strings", "keyword", "ip_public"):
        continue
    src = git(DS, "show", "HEAD:" + f)
    for m in re.finditer(r"\(\s*(r?['\"])(.+?)\1\s*,\s*True\s*,?\s*\)", src):
        try:
            payload = ast.literal_eval(m.group(1) + m.group(2) + m.group(1)[-1])
        except Exception:
            continue
        payload = realistic(payload)
        runs = [r for r in re.findall(r"[A-Za-z0-9+/=_\-]{12,}", payload) if re.search(r"[0-9]", r)]
        if not runs or "\n" in payload:
            continue
        secret = max(runs, key=len)
        for text in contexts(payload, secret):
            rows.append(("detect-secrets", "ds/" + plugin, text, secret))

# Nosey Parker (Apache-2.0): every rule's `examples`, the secret being the
# rule's capture group (for rules with several groups, the one named below:
# the password or key, not the user, host or client id). Rules whose
# categories lack `secret` (identifiers) or include `hashed` (password
# hashes) are left out. Values that are no credential at all are left out
# too (rule written before any measurement): shorter than 8 characters,
# variable references (`$x`, `${x}`, `%x%`, `#{x}`), or holding the words
# password/passwd/secret/username/your (`SOME_PASSWORD`, `myPassword`).
import yaml, regex
NP = "/work/.mirror/praetorian-inc+noseyparker/repo"
NP_RULES = "crates/noseyparker/data/default/builtin/rules/"
NP_GROUP = {"np.auth0.1": 3, "np.azure.2": 3, "np.generic.8": 3, "np.netrc.1": 3,
            "np.phpmailer.1": 3}  # other multi-group rules: group 2

def np_value(rule, m):
    if regex.compile(rule["pattern"]).groups == 1:
        secret = m.group(1)
    else:
        secret = m.group(NP_GROUP.get(rule["id"], 2))
    secret = (secret or "").strip().strip('\\"\'')
    inner = re.search(r"(?i)password=([^;\"']+)", secret)
    if inner:
        secret = inner.group(1)
    if "\n" in secret or "\\n" in secret:
        body = [l.strip('" +\\r') for l in re.split(r"\\r\\n|\\n|\n", secret)]
        body = [l for l in body if re.fullmatch(r"[A-Za-z0-9+/=]{40,}", l)]
        secret = body[0] if body else ""
    return secret

def np_credential(secret):
    return (len(secret) >= 8 and not re.match(r"^[$%]|^#\{", secret) and "${" not in secret
            and not re.search(r"(?i)password|passwd|secret|username|your", secret))

np_files = [f for f in git(NP, "ls-tree", "-r", "HEAD", "--name-only").split("\n")
            if f.startswith(NP_RULES) and f.endswith(".yml")]
for f in np_files:
    for rule in (yaml.safe_load(git(NP, "show", "HEAD:" + f)) or {}).get("rules", []):
        cats = rule.get("categories") or []
        if "secret" not in cats or "hashed" in cats:
            continue
        try:
            pattern = regex.compile(rule["pattern"])
        except regex.error:
            continue
        for example in rule.get("examples") or []:
            example = realistic(example)
            m = pattern.search(example)
            if not m:
                continue
            secret = np_value(rule, m)
            if not np_credential(secret) or secret not in example:
                continue
            s = example.find(secret)
            ls = example.rfind("\n", 0, s) + 1
            le = example.find("\n", s + len(secret))
            line = example[ls:len(example) if le < 0 else le].strip()
            fmt = "np/" + rule["id"][3:]
            for text in contexts(line, secret):
                rows.append(("noseyparker", fmt, text, secret))

fixed = []
for source, fmt, text, secret in rows:
    if "-----BEGIN" in secret:
        body = [l for l in re.split(r"\\n|\n", secret) if re.fullmatch(r"[A-Za-z0-9+/=]{40,}", l)]
        secret = body[0] if body else secret
    if placeholder.search(secret):
        new_secret = realistic(secret)
        text = text.replace(secret, new_secret)
        secret = new_secret
    fixed.append((source, fmt, text, secret))
rows = fixed

seen = set()
uniq = []
for r in rows:
    if (r[2], r[3]) in seen:
        continue
    seen.add((r[2], r[3]))
    uniq.append(r)

clean = []
for f in files:
    if "/snapshots/ok." not in f or not re.search(r"/input(\.txt|\.md|\.json|\.yaml|\.yml|\.env)?$", f):
        continue
    pkg = f.split("/")[2]
    if pkg in SKIP_SL:
        continue
    text = git(SL, "show", "HEAD:" + f)
    for line in text.split("\n"):
        line = line.strip()
        if len(line) >= 8 and not line.startswith("#") and line not in [c[1] for c in clean]:
            clean.append(("secretlint-ok/" + pkg.replace("secretlint-rule-", ""), line))

out.mkdir(parents=True, exist_ok=True)
esc = lambda s: s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
with open(out / "secrets.tsv", "w") as w:
    w.write("# source\tformat\ttext\tsecret  (\\n, \\t, \\\\ escaped). Built by build_corpus.py; see README.md.\n")
    for r in uniq:
        w.write("\t".join(esc(x) for x in r) + "\n")
# secretlint's ok.* fixtures are "not this rule's format", often still a
# credential of another format: they are not a clean set and are not written.
fmts = {r[1] for r in uniq}
print(len(uniq), "secret rows,", len({r[3] for r in uniq}), "secrets,", len(fmts), "formats")
