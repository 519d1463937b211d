//! Where things are: the store directory, and the scope inferred from the
//! working directory.
//!
//! Scope inference (flags override each part):
//! - tenant: `HMG_TENANT`, else `tenant_id` in the store's `config.json`,
//!   else the login name (`USER`/`LOGNAME`/`USERNAME`), else `local`;
//! - inside a git work tree: workspace = the `origin` remote's owner
//!   (`git@github.com:owner/repo.git` → `owner`), repository = its name,
//!   branch = the checked-out branch (`detached-<sha12>` when detached);
//!   without a remote: workspace `local`, repository = the work tree's folder;
//! - outside git: workspace `local`, repository = the folder's name, branch
//!   `default`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::api::Scope;

/// `--store`, else `$HMG_STORE`, else `$XDG_DATA_HOME/hmg/store`
/// (`~/.local/share/hmg/store`).
pub fn store_dir(flag: Option<&Path>) -> PathBuf {
    if let Some(dir) = flag {
        return dir.to_owned();
    }
    if let Some(dir) = std::env::var_os("HMG_STORE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("hmg").join("store")
}

/// What a host is told (on stderr, by [`model_dir`]) when no model was
/// chosen and none is in the cache.
const NO_MODEL: &str =
    "hmg: no embedding model found (run ./setup.sh, or set HMG_MODEL); recall is keyword-only";

/// The model `scripts/model/fetch.sh` prepares (`./setup.sh` runs it).
pub const DEFAULT_MODEL: &str = "model/e5-small-v2";

/// The embedding model directory: `--model`, else `$HMG_MODEL`, else the
/// default model in the cache dir if it is there (if not, says once on
/// stderr that recall is keyword-only). `none` (or `off`) means keyword-only
/// recall.
pub fn model_dir(flag: Option<&Path>) -> Option<PathBuf> {
    let chosen = flag
        .map(Path::to_path_buf)
        .or_else(|| env_nonempty("HMG_MODEL").map(PathBuf::from));
    match chosen {
        Some(dir) if dir == Path::new("none") || dir == Path::new("off") => None,
        Some(dir) => Some(dir),
        None => {
            let dir = crate::default_cache_dir()
                .map(|c| c.join(DEFAULT_MODEL))
                .filter(|d| d.join("tokenizer.bin").exists());
            if dir.is_none() {
                eprintln!("{NO_MODEL}");
            }
            dir
        }
    }
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// The tenant for a store: `HMG_TENANT`, the store's config, the login name.
/// A `config.json` that exists but cannot be read, is not JSON, or has a
/// `tenant_id` that is not a non-empty string is an error: falling back to
/// the login name would silently open someone else's view of the store.
pub fn tenant(store: &Path) -> anyhow::Result<String> {
    if let Some(tenant) = env_nonempty("HMG_TENANT") {
        return Ok(tenant);
    }
    if let Some(tenant) = config_tenant(&store.join("config.json"))? {
        return Ok(tenant);
    }
    Ok(env_nonempty("USER")
        .or_else(|| env_nonempty("LOGNAME"))
        .or_else(|| env_nonempty("USERNAME"))
        .unwrap_or_else(|| "local".to_owned()))
}

/// The personal-data policy of a store's `config.json`
/// (`"personal_data": {"emails": true, …}`; kinds left out keep their
/// defaults); `None` when the file or the field is absent.
pub fn personal_data(store: &Path) -> anyhow::Result<Option<crate::api::PersonalDataPolicy>> {
    use anyhow::bail;
    let Some(value) = config_field(&store.join("config.json"), "personal_data")? else {
        return Ok(None);
    };
    let mut policy = crate::api::PersonalDataPolicy {
        payment_cards: true,
        national_ids: true,
        emails: false,
        phones: false,
    };
    let Some(fields) = value.as_object() else {
        bail!("config.json: `personal_data` must be an object such as {{\"emails\": true}}");
    };
    for (key, v) in fields {
        let Some(on) = v.as_bool() else {
            bail!("config.json: `personal_data.{key}` must be true or false");
        };
        match key.as_str() {
            "payment_cards" => policy.payment_cards = on,
            "national_ids" => policy.national_ids = on,
            "emails" => policy.emails = on,
            "phones" => policy.phones = on,
            other => bail!(
                "config.json: unknown `personal_data.{other}` (payment_cards, national_ids, emails, phones)"
            ),
        }
    }
    Ok(Some(policy))
}

/// One top-level field of a `config.json`; `None` when the file or the field
/// is absent.
fn config_field(path: &Path, field: &str) -> anyhow::Result<Option<serde_json::Value>> {
    use anyhow::{Context, bail};
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let value: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not valid JSON (expected e.g. {{\"tenant_id\": \"alice\"}})",
            path.display()
        )
    })?;
    let Some(object) = value.as_object() else {
        bail!("{} must hold a JSON object", path.display());
    };
    Ok(object.get(field).cloned())
}

/// `tenant_id` of a store's `config.json`; `None` when the file or the field
/// is absent.
fn config_tenant(path: &Path) -> anyhow::Result<Option<String>> {
    match config_field(path, "tenant_id")? {
        None => Ok(None),
        Some(serde_json::Value::String(t)) if !t.trim().is_empty() => Ok(Some(t)),
        Some(other) => anyhow::bail!(
            "{}: `tenant_id` must be a non-empty string, not {other}",
            path.display()
        ),
    }
}

/// What git says about a directory.
#[derive(Debug, Default, PartialEq)]
pub struct GitInfo {
    pub root: PathBuf,
    pub branch: Option<String>,
    pub remote_url: Option<String>,
}

/// Reads `.git` directly (no `git` process): HEAD for the branch, config for
/// the `origin` remote (or the first remote). Handles worktrees (`.git` file).
pub fn git_info(start: &Path) -> Option<GitInfo> {
    let root = start
        .ancestors()
        .find(|dir| dir.join(".git").exists())?
        .to_owned();
    let dot_git = root.join(".git");
    let git_dir = if dot_git.is_file() {
        let text = fs::read_to_string(&dot_git).ok()?;
        let target = text.trim().strip_prefix("gitdir:")?.trim();
        let path = PathBuf::from(target);
        if path.is_absolute() {
            path
        } else {
            root.join(path)
        }
    } else {
        dot_git
    };
    let common = fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .map(|c| {
            let p = PathBuf::from(c.trim());
            if p.is_absolute() { p } else { git_dir.join(p) }
        })
        .unwrap_or_else(|| git_dir.clone());
    let head = fs::read_to_string(git_dir.join("HEAD")).unwrap_or_default();
    let head = head.trim();
    let branch = match head.strip_prefix("ref:") {
        Some(r) => r.trim().strip_prefix("refs/heads/").map(str::to_owned),
        None if head.len() >= 12 => Some(format!("detached-{}", &head[..12])),
        None => None,
    };
    let config = fs::read_to_string(common.join("config")).unwrap_or_default();
    Some(GitInfo {
        root,
        branch,
        remote_url: remote_url(&config),
    })
}

/// The url of `[remote "origin"]`, else of the first remote.
fn remote_url(config: &str) -> Option<String> {
    let mut section = String::new();
    let mut first = None;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_owned();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim() != "url" || !section.starts_with("[remote ") {
            continue;
        }
        let url = value.trim().to_owned();
        if section == "[remote \"origin\"]" {
            return Some(url);
        }
        first.get_or_insert(url);
    }
    first
}

/// `(owner, repo)` of a remote URL: scp-like, URL or path forms.
pub fn owner_and_repo(url: &str) -> Option<(String, String)> {
    let url = url.trim().trim_end_matches('/');
    let path = if let Some((_, rest)) = url.split_once("://") {
        rest.split_once('/').map(|(_, p)| p)?.to_owned()
    } else if let Some((host, rest)) = url.split_once(':').filter(|(h, _)| !h.contains('/')) {
        let _ = host;
        rest.to_owned()
    } else {
        url.to_owned()
    };
    let path = path.trim_end_matches(".git").trim_matches('/');
    let (owner, repo) = path.rsplit_once('/')?;
    let owner = owner.rsplit('/').next().unwrap_or(owner);
    (!owner.is_empty() && !repo.is_empty()).then(|| (owner.to_owned(), repo.to_owned()))
}

fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .unwrap_or_else(|| "root".to_owned())
}

/// The scope of a working directory (see the module doc).
pub fn infer_scope(cwd: &Path, tenant: String) -> Scope {
    let (workspace, repository, branch) = match git_info(cwd) {
        Some(git) => {
            let (owner, repo) = git
                .remote_url
                .as_deref()
                .and_then(owner_and_repo)
                .unwrap_or_else(|| ("local".to_owned(), folder_name(&git.root)));
            (
                owner,
                repo,
                git.branch.unwrap_or_else(|| "default".to_owned()),
            )
        }
        None => ("local".to_owned(), folder_name(cwd), "default".to_owned()),
    };
    Scope {
        tenant_id: tenant,
        workspace: Some(workspace),
        repository: Some(repository),
        branch: Some(branch),
        session: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_personal_data_policy_comes_from_config() {
        let dir = tempfile::tempdir().unwrap();
        assert!(personal_data(dir.path()).unwrap().is_none());
        fs::write(
            dir.path().join("config.json"),
            r#"{"personal_data": {"emails": true}}"#,
        )
        .unwrap();
        let p = personal_data(dir.path()).unwrap().unwrap();
        assert!(p.payment_cards && p.national_ids && p.emails && !p.phones);
        for bad in [
            r#"{"personal_data": {"faxes": true}}"#,
            r#"{"personal_data": {"emails": 1}}"#,
            r#"{"personal_data": true}"#,
        ] {
            fs::write(dir.path().join("config.json"), bad).unwrap();
            assert!(personal_data(dir.path()).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_malformed_config_is_an_error_not_another_tenant() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        assert_eq!(config_tenant(&path).unwrap(), None);
        for (text, want) in [
            (r#"{"tenant_id": "alice"}"#, Some("alice")),
            (r#"{"other": 1}"#, None),
        ] {
            fs::write(&path, text).unwrap();
            assert_eq!(config_tenant(&path).unwrap().as_deref(), want);
        }
        for bad in [
            r#"{"tenant_id": "alice""#,
            "[]",
            r#"{"tenant_id": 7}"#,
            r#"{"tenant_id": " "}"#,
        ] {
            fs::write(&path, bad).unwrap();
            let e = config_tenant(&path).unwrap_err();
            assert!(format!("{e:#}").contains("config.json"), "{bad}: {e:#}");
        }
    }

    #[test]
    fn remote_forms() {
        let want = Some(("mem0ai".to_owned(), "mem0".to_owned()));
        assert_eq!(owner_and_repo("git@github.com:mem0ai/mem0.git"), want);
        assert_eq!(owner_and_repo("https://github.com/mem0ai/mem0"), want);
        assert_eq!(owner_and_repo("https://github.com/mem0ai/mem0.git/"), want);
        assert_eq!(owner_and_repo("ssh://git@github.com/mem0ai/mem0.git"), want);
        assert_eq!(owner_and_repo("/srv/git/mem0ai/mem0.git"), want);
        assert_eq!(
            owner_and_repo("https://gitlab.com/group/sub/proj.git"),
            Some(("sub".into(), "proj".into()))
        );
        assert_eq!(owner_and_repo("nothing"), None);
    }

    #[test]
    fn reads_a_work_tree() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join("app/.git");
        fs::create_dir_all(&git).unwrap();
        fs::write(git.join("HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        fs::write(git.join("config"), "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = git@h:a/b.git\n[remote \"origin\"]\n\turl = https://github.com/acme/shop.git\n").unwrap();
        let nested = dir.path().join("app/src/deep");
        fs::create_dir_all(&nested).unwrap();
        let scope = infer_scope(&nested, "me".into());
        assert_eq!(scope.display(), "me/acme/shop/feature/x");
        let outside = infer_scope(dir.path(), "me".into());
        assert_eq!(outside.workspace.as_deref(), Some("local"));
        assert_eq!(outside.branch.as_deref(), Some("default"));
    }
}
