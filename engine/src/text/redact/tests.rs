use super::*;

fn redacted(text: &str) -> String {
    redact(text).text
}

/// The secret is gone and the text around it is kept.
fn hides(text: &str, secret: &str) {
    let out = redacted(text);
    assert!(!out.contains(secret), "{secret:?} survived in {out:?}");
    assert!(out.contains("[REDACTED:"), "{out}");
}

fn untouched(text: &str) {
    assert_eq!(redacted(text), text);
}

#[test]
fn only_the_secret_goes_the_label_stays() {
    assert_eq!(
        redacted("主庫連線 postgres://admin:s3cr3tPw9@db.internal:5432/app 已設定"),
        "主庫連線 postgres://admin:[REDACTED:url-password]@db.internal:5432/app 已設定"
    );
    let out = redacted("login with password=hunter2x today");
    assert!(out.starts_with("login with password=[REDACTED:"), "{out}");
    assert!(out.ends_with("] today"), "{out}");
    let out = redacted("Slack Bot xoxb-2411625812-2462301337312-kTZXd3wPzS1N4BfUxJfCzqLq");
    assert!(out.starts_with("Slack Bot [REDACTED:"), "{out}");
}

#[test]
fn formats_the_old_rules_missed() {
    let cases = [
        (
            "aws_secret_access_key = 9wV3Qz1X8pL0rT5mN2bK7cJ4hG6fD1sA0eR9yU3i",
            "9wV3Qz1X8pL0rT5mN2bK7cJ4hG6fD1sA0eR9yU3i",
        ),
        (
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=q3Zp9Lw2Xk8vB1nM4cT7yR0sD5fG6hJ2kL9pO3iU8yT1rE4wQ7aS0dF2gH5jK8lZ0xC3vB6nM9qW2eR5tY8u==;EndpointSuffix=core.windows.net",
            "q3Zp9Lw2Xk8vB1nM4cT7yR0sD5fG6hJ2kL9pO3iU8yT1rE4wQ7aS0dF2gH5jK8lZ0xC3vB6nM9qW2eR5tY8u==",
        ),
        (
            "webhook https://hooks.slack.com/services/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",
            "Zx9Kq2Lm4Np6Rs8Tv0Wy3Ab5",
        ),
        (
            "SENDGRID_API_KEY=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",
            "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
        ),
        (
            "hf token 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",
            "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",
        ),
        (
            "//registry.npmjs.org/:_authToken=npm_4fT9kQ2xLm7Pz8Rw1Ys5Vb3Nc6Hd0Jg2Ka1E",
            "npm_4fT9kQ2xLm7Pz8Rw1Ys5Vb3Nc6Hd0Jg2Ka1E",
        ),
        (
            "Authorization: Basic YWRtaW46czNjcjN0UGFzc3dvcmQ=",
            "YWRtaW46czNjcjN0UGFzc3dvcmQ=",
        ),
        (
            "use Bearer abcdefghijklmnop1234 for the API",
            "abcdefghijklmnop1234",
        ),
        (
            "curl -u deploy:Tr0ub4dor3x https://ci.internal/api",
            "Tr0ub4dor3x",
        ),
        ("docker login -p Xk92!fLm0q registry.acme.io", "Xk92!fLm0q"),
        ("DB_PASSWORD=Pg4dm1n!2024", "Pg4dm1n!2024"),
        (
            "JWT_SECRET=8f2b6c1e9d4a7f3b0c5e2d8a1f6b9c3e",
            "8f2b6c1e9d4a7f3b0c5e2d8a1f6b9c3e",
        ),
        ("export REDIS_PASSWORD='r3d!sPa55w0rd'", "r3d!sPa55w0rd"),
        (
            r#"{"user": "svc", "password": "J7#kL9$mQ2xP"}"#,
            "J7#kL9$mQ2xP",
        ),
        ("PGPASSWORD=q9Wm2Lp7Xz psql -h db", "q9Wm2Lp7Xz"),
        ("ssh://git:Gh7!pw2Kq@code.acme.io/repo.git", "Gh7!pw2Kq"),
        ("資料庫密碼是 pg_admin_123，要記得換", "pg_admin_123"),
        ("the password is Summer#2024 for the VPN", "Summer#2024"),
        ("口令为 Xy7#kp92q", "Xy7#kp92q"),
        (
            "client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
            "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
        ),
    ];
    for (text, secret) in cases {
        hides(text, secret);
    }
}

#[test]
fn placeholders_and_code_are_left_alone() {
    for text in [
        "let token = lexer.next_token();",
        "postgres://user:${PASSWORD}@host/db",
        "password=<your-password>",
        "密码=${DB_PASSWORD}",
        "password: {{ .Values.db.password }}",
        "token: ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "api_key = os.getenv(\"API_KEY\")",
        "the password policy needs 12 characters",
        "把 password 欄位改成必填",
        "AWS example key AKIAIOSFODNN7EXAMPLE from the docs",
        "secret = process.env.SECRET",
        "password: ********",
        "set token to your-token-here",
        "部署前要先跑 smoke test，Kafka 的 retention 改成 7 天。",
        "client_secret: FILL_ME_IN",
        "ANTHROPIC_API_KEY=sk-ant-...",
        "TOKEN_HEADER = \"X-Auth-Token\"",
        "refund for charge ch_3PqRsT4uVwXyZ9aB8cD7eF6g went through",
    ] {
        untouched(text);
    }
}

#[test]
fn random_tokens_without_a_label_or_prefix() {
    hides(
        "the bot uses Qm7vT2xK9pLr4ZbN8wYc3HjF6sDg1Ve0 for the webhook",
        "Qm7vT2xK9pLr4ZbN8wYc3HjF6sDg1Ve0",
    );
    // a vendor prefix on a random body, lower-case base32 keys
    hides(
        "stream key live_48213377_kR7pZ2mXq9TbW4vN6yLc3JhD8sF",
        "kR7pZ2mXq9TbW4vN6yLc3JhD8sF",
    );
    hides(
        "azure devops pat 7tq2kzr4mwx9bn3vpd6hc8jsl5fgy2nq4wt7rk9zmx3cb6vp8dqh",
        "7tq2kzr4mwx9bn3vpd6hc8jsl5fgy2nq4wt7rk9zmx3cb6vp8dqh",
    );
    // Chinese punctuation ends a secret for the catalogue as ASCII does
    hides(
        "部署用的是 license_key: 4f1c9a7e2b8d3f6a0c5e9b1d7a3f8c2e6b0d4NRAL，之後要換掉",
        "4f1c9a7e2b8d3f6a0c5e9b1d7a3f8c2e6b0d4NRAL",
    );
    hides("記一下：-u deploy:Zp4rT8wq2Lm9 就能登入", "Zp4rT8wq2Lm9");
    hides(
        "machine git.example.org login alice password Tr0ub4dor&3x",
        "Tr0ub4dor&3x",
    );
    hides("if password == \"Kx9#mP2vQ7\": allow()", "Kx9#mP2vQ7");
    hides(":password => 'w8Jq2Zt5rL',", "w8Jq2Zt5rL");
}

#[test]
fn random_looking_names_are_not_secrets() {
    for text in [
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it",
        "trace 4bf92f3577b34da6a3ce929d0e0e4736 and request 01HGW2N7QK8ZJ4V5R6T9YBXD3M",
        "see https://docs.example.com/d/7Hq2ZkW9mPxR4vLt8NcB3sYj6FgD1aQe/edit",
        "the file is at /srv/cache/Vq8Zt2Km4Xp7Rb9Nw3Lc6Hj1Fs5Dg0Ty/blob.bin",
        "s3://team-assets/builds/Lx7Qp2Zm9Wt4Rk8Vb3Nc6Yh1Jf5Ds0Ga.tar",
        "go.sum: example.org/mod v1.2.0 h1:Zq8Xv2Lm7Tp4Kr9Wb3Nc6Yh1Jf5Ds0GaQe2Vt8Mn4=",
        "fingerprint SHA256:Qm7vT2xK9pLr4ZbN8wYc3HjF6sDg1Ve0aB5nW2kRt7M",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq8Zt2Km4Xp7Rb9Nw3Lc6Hj1Fs5Dg0TyVq8Zt2Km4Xp bob@box",
        "publishable key pk_live_51Hq8Zt2Km4Xp7Rb9Nw3Lc6 is in the page",
        "IPFS bafybeihq8zt2km4xp7rb9nw3lc6hj1fs5dg0tyvq8zt2km4xp7rb9nw3lc holds it",
        "SECRET_NAME=prod/payments/stripe",
        "renderCheckoutSummaryWithDiscountsV2 is too long",
    ] {
        untouched(text);
    }
}

/// A credential compared with a literal is hard-coded; compared with a
/// name it is code. An age recipient is a public key.
#[test]
fn comparisons_and_public_recipients() {
    hides(
        r#"if username == "admin" and password == "123P4ssW0rd@@":"#,
        "123P4ssW0rd@@",
    );
    untouched("if token.kind == TokenKind::Ident { parser.bump(); }");
    untouched("match secret_kind { SecretKind::Password => 1, _ => 0 }");
    untouched(
        "age -r age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p -o out.age in.txt",
    );
}

/// Two secrets with one separator between them are both found in one pass
/// (a rule consumes the separator after the first).
#[test]
fn secrets_side_by_side_in_one_pass() {
    let text = "keys AP1445056cBac AP1445056cBacbdA6cBan done";
    let once = redacted(text);
    assert!(!once.contains("AP1445056"), "{once}");
    assert_eq!(redacted(&once), once);
}

#[test]
fn personal_data_by_policy() {
    // A Visa test number (Luhn-valid), a Taiwan ID and a mainland ID with
    // valid check digits.
    hides("卡號 4111 1111 1111 1111 到期 12/27", "4111 1111 1111 1111");
    hides("身分證 A123456789", "A123456789");
    hides("身份证号 11010519491231002X", "11010519491231002X");
    // Not Luhn-valid, not a valid ID: numbers stay.
    untouched("訂單號 4111 1111 1111 1112");
    untouched("工號 A123456788");
    // E-mail and phone only when the policy asks.
    untouched("寄信給 alice@example.org");
    let policy = PersonalData {
        emails: true,
        phones: true,
        ..PersonalData::default()
    };
    let out = redact_with("寄信給 alice@example.org 或打 0912-345-678", policy).text;
    assert!(!out.contains("alice@") && !out.contains("345-678"), "{out}");
}

#[test]
fn nothing_but_a_secret() {
    assert!(redact("password=hunter2x").only_secrets);
    assert!(redact("  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 ; ").only_secrets);
    assert!(!redact("prod db password=hunter2x").only_secrets);
    assert!(!redact("plain text").only_secrets);
    let r = redact("a 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 and postgres://u:Pw9xq2Lk@h/db");
    assert_eq!(r.counts.len(), 2, "{r:?}");
}

#[test]
fn redacting_twice_changes_nothing() {
    for text in [
        "DB_PASSWORD=Pg4dm1n!2024 and token=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",
        "資料庫密碼是 pg_admin_123",
    ] {
        let once = redacted(text);
        assert_eq!(redacted(&once), once);
    }
}

/// A literal is a literal: quoted after "the password is", quoted and
/// assigned to a name that ends in pass/password/secret, or passed as the
/// password of a well-known credential API — even when it is a plain word.
/// A variable, a call or a validation keyword in the same place is code.
#[test]
fn quoted_passwords_and_credential_apis() {
    let cases = [
        (
            r#"ensure the password is "centipede" and press On"#,
            "centipede",
        ),
        ("$password = \"goodspec\";", "goodspec"),
        (r#"$password = \"goodspec\";"#, "goodspec"),
        ("db_pass: \"letmein7\"", "letmein7"),
        (
            r#"sender.Credentials = new NetworkCredential("ops@example.com", "vzihlaquknriqlht");"#,
            "vzihlaquknriqlht",
        ),
        (
            r#"requests.get(url, auth=HTTPBasicAuth("admin", "tangerine"))"#,
            "tangerine",
        ),
        (
            r#"r = requests.get(url, auth=("admin", "tangerine"))"#,
            "tangerine",
        ),
        (
            r#"server.login("me@example.com", "correcthorse")"#,
            "correcthorse",
        ),
        (
            "ado pat aQwErTy123456789AbCdEf0123456789AbCdEf0123456789AbCdEf0123456789AbCdEf012345AZDOabc1 expires soon",
            "aQwErTy123456789AbCdEf0123456789AbCdEf",
        ),
    ];
    for (text, secret) in cases {
        hides(text, secret);
    }
    for text in [
        "'password' => 'required|string|min:8|confirmed',",
        r#"rules: { password: "required" }"#,
        r#"<input type="password" name="password" placeholder="Password">"#,
        r#"password_field = "password""#,
        r#"new NetworkCredential(user, password)"#,
        r#"new NetworkCredential("svc-backup", Environment.GetEnvironmentVariable("BACKUP_PW"))"#,
        r#"requests.get(url, auth=HTTPBasicAuth(user, os.environ["API_PW"]))"#,
        r#"auth=("admin", getpass())"#,
        "server.login(sender, app_password)",
        r#"for guests the password is "optional""#,
        r#"密码是"必填"的"#,
        r#"the password is "<your password>""#,
        r#"secret: "string""#,
        r#"password: "{{ .Values.db.password }}""#,
        r#"DB_PASSWORD: "${DB_PASSWORD}""#,
        r#"client_secret = "CHANGE_ME_IN_PROD""#,
        r#"$password = $_POST["password"];"#,
    ] {
        untouched(text);
    }
}

/// "The password for X is …": what the password belongs to, an adverb,
/// between the word and the verb (cases written with the rule, before
/// measuring it).
#[test]
fn password_statements_with_what_they_belong_to() {
    for (text, secret) in [
        (
            "the password for the staging box is s3cr3tP@ss",
            "s3cr3tP@ss",
        ),
        ("password of the backup NAS is now Xk9#mq2Lz", "Xk9#mq2Lz"),
        ("the router password is still Hunter2024!", "Hunter2024!"),
        ("資料庫密碼現在是 pg_admin_123", "pg_admin_123"),
        ("VPN 的密码已经改成 Vpn#2026ab", "Vpn#2026ab"),
    ] {
        hides(text, secret);
    }
    for text in [
        "the password for each user is hashed with argon2id",
        "a password of at least 12 characters is required",
        "the password for the admin account is stored in Vault",
        "password issuer: the identity team",
        "密碼現在是必填欄位",
        "the password to the wiki is on the team's 1Password vault",
    ] {
        untouched(text);
    }
}

/// A value rejected as no secret is searched again: the label after it
/// inside it is found in the first pass, not only in a second.
#[test]
fn mailgun_keys_named_by_their_provider() {
    hides(
        "the mailgun key-3f9a2b7c1d8e4f6a0b5c9d2e7f1a3b8c sends our mail",
        "key-3f9a2b7c1d8e4f6a0b5c9d2e7f1a3b8c",
    );
    hides(
        "Mailgun 寄信用的金鑰是 key-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "key-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    );
    // Without the provider's name, `key-` and hex is a cache key or a
    // digest's label.
    untouched("cache entry key-3f9a2b7c1d8e4f6a0b5c9d2e7f1a3b8c expired");
}

#[test]
fn a_rejected_value_is_searched_for_the_next_label() {
    let text = "密码=$x let$token = lex)é/r:ACCESS_KEY=CYEAMP%%%%%%% done";
    let once = redacted(text);
    assert!(!once.contains("CYEAMP"), "{once}");
    assert_eq!(redacted(&once), once);
}

#[test]
fn an_ssh_key_type_excuses_only_the_body_beside_it() {
    // The body of `ssh-rsa AAAA…` on its line is a public key; a token on
    // a later line, or after `ssh-rsa` glued to another word, is not — and
    // redacting twice changes nothing (fuzzing found a token spared only
    // while a redacted neighbour still ended in `ssh-rsa`).
    let text = "K7MDNCDG/bPxVfiCYIMPMELAX/Kssh-rsa\n\nK7MDNCDG/bPxVfiCYIMPMELAX/K7MDEKEY";
    let once = redacted(text);
    assert_eq!(once, "[REDACTED:random-token]\n\n[REDACTED:random-token]");
    assert_eq!(redacted(&once), once);
    let text = "ssh-rsa\nK7MDNCDG/bPxVfiCYIMPMELAX/K7MDEKEY";
    assert!(!redacted(text).contains("K7MDEKEY"), "{}", redacted(text));
}
