//! Which config names hold secrets: Kafka's own PASSWORD-typed configs, under every prefix
//! Kafka and its clients put before a config name, and a fallback on the words of the name
//! for configs Kafka does not know (plugins, connectors).

use std::sync::OnceLock;

/// `schemas/password-configs.tsv`: the configs Kafka types as `PASSWORD`, written from Kafka's
/// jars by `tools/password-configs/run.sh`.
const PASSWORD_CONFIGS_TSV: &str = include_str!("../../../schemas/password-configs.tsv");

/// The configs that Kafka's own `ConfigDef`s (broker, topic, producer, consumer, admin,
/// Streams, Connect) type as `PASSWORD`, sorted: `ssl.key.password`, `sasl.jaas.config`, ...
pub fn password_configs() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<&'static str> = PASSWORD_CONFIGS_TSV
            .lines()
            .filter(|line| !line.starts_with('#'))
            .skip(1) // the column names
            .filter_map(|line| line.split('\t').next())
            .filter(|name| !name.is_empty())
            .collect();
        names.sort_unstable();
        names
    })
}

/// Words that mark a config name as a secret wherever they appear in it (`ldap.bind.password`,
/// `client.secret`, `my.plugin.jaas`): the fallback for names Kafka does not know.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "jaas",
    "credential",
];

/// Last words that mark a config name as a secret (`api.key`, `auth.token`).
const SECRET_LAST_WORDS: &[&str] = &["key", "token", "apikey", "pwd"];

/// Whether a config of this name holds a secret, so that its value is redacted. True for:
///
/// - a config Kafka types as `PASSWORD` ([`password_configs`]), also behind any prefix: the
///   broker's per-listener form `listener.name.<listener>.ssl.key.password` and
///   `listener.name.<listener>.<mechanism>.sasl.jaas.config`, Connect's
///   `producer.override.`/`consumer.`/`admin.`, Streams' `main.consumer.`/`restore.consumer.`,
///   MirrorMaker's `<cluster>.`: any name whose last dot-separated words are such a config;
/// - as a fallback for configs Kafka does not know: a name with a word (split at `.`, `_`
///   and `-`, ignoring case) containing `password`, `passwd`, `passphrase`, `secret`, `jaas` or
///   `credential`, or whose last word is `key`, `token`, `apikey` or `pwd`.
///
/// The fallback may hide a value that is not a secret (`sasl.oauthbearer.client.credentials.
/// client.id`); that costs a reader one value, where the opposite mistake would leak one.
pub fn is_secret_config_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    // A known config, alone or after a prefix that ends in a dot.
    let known = password_configs().iter().any(|config| {
        let config = config.as_bytes();
        bytes.len() >= config.len() && {
            let start = bytes.len() - config.len();
            (start == 0 || bytes[start - 1] == b'.') && bytes[start..].eq_ignore_ascii_case(config)
        }
    });
    if known {
        return true;
    }
    has_secret_word(bytes) || has_secret_last_word(bytes)
}

/// The bytes that begin a word of [`SECRET_WORDS`], in either case.
const SECRET_WORD_STARTS: [bool; 256] = {
    let mut starts = [false; 256];
    let mut i = 0;
    while i < SECRET_WORDS.len() {
        let first = SECRET_WORDS[i].as_bytes()[0];
        starts[first.to_ascii_lowercase() as usize] = true;
        starts[first.to_ascii_uppercase() as usize] = true;
        i += 1;
    }
    starts
};

/// Whether a word of the name contains one of [`SECRET_WORDS`]. None of them holds a word
/// separator, so the whole name is searched, in one pass that stops only where one of them
/// could begin.
fn has_secret_word(name: &[u8]) -> bool {
    (0..name.len()).any(|at| {
        SECRET_WORD_STARTS[name[at] as usize] && {
            let rest = &name[at..];
            SECRET_WORDS.iter().any(|word| {
                let word = word.as_bytes();
                rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word)
            })
        }
    })
}

/// Whether the name's last word (after `.`, `_` or `-`) is one of [`SECRET_LAST_WORDS`].
fn has_secret_last_word(name: &[u8]) -> bool {
    let end = name
        .iter()
        .rposition(|b| !is_separator(*b))
        .map_or(0, |i| i + 1);
    let start = name[..end]
        .iter()
        .rposition(|b| is_separator(*b))
        .map_or(0, |i| i + 1);
    let last = &name[start..end];
    SECRET_LAST_WORDS
        .iter()
        .any(|word| last.eq_ignore_ascii_case(word.as_bytes()))
}

fn is_separator(byte: u8) -> bool {
    matches!(byte, b'.' | b'_' | b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_read() {
        let names = password_configs();
        assert!(names.contains(&"ssl.key.password"));
        assert!(names.contains(&"sasl.jaas.config"));
        assert!(!names.contains(&"name"), "the header line is not a config");
        assert!(names.iter().all(|name| !name.contains(char::is_whitespace)));
    }

    #[test]
    fn every_known_password_config_is_secret_with_and_without_prefixes() {
        for name in password_configs() {
            assert!(is_secret_config_name(name), "{name}");
            for prefix in [
                "listener.name.sasl_ssl.",
                "listener.name.sasl_ssl.scram-sha-256.",
                "listener.name.external.plain.",
                "producer.override.",
                "consumer.",
                "main.consumer.",
                "source.cluster.",
            ] {
                let prefixed = format!("{prefix}{name}");
                assert!(is_secret_config_name(&prefixed), "{prefixed}");
            }
            assert!(is_secret_config_name(&name.to_ascii_uppercase()), "{name}");
        }
    }

    #[test]
    fn each_secret_word_is_searched_for() {
        for word in SECRET_WORDS {
            assert!(has_secret_word(word.as_bytes()), "{word}");
            assert!(has_secret_word(
                format!("x.{}.y", word.to_uppercase()).as_bytes()
            ));
            assert!(!has_secret_word(&word.as_bytes()[1..]), "{word}");
        }
    }

    #[test]
    fn fallback_names() {
        for name in [
            "ldap.bind.password",
            "my_plugin_PASSWORD",
            "vault.secret.path",
            "sasl.login.jaas",
            "aws.credentials.provider",
            "datadog.api.key",
            "github-token",
            "db.pwd",
        ] {
            assert!(is_secret_config_name(name), "{name}");
        }
    }

    #[test]
    fn ordinary_configs_are_not_secret() {
        for name in [
            "retention.ms",
            "cleanup.policy",
            "ssl.keystore.location",
            "ssl.keystore.type",
            "ssl.keymanager.algorithm",
            "key.serializer",
            "default.key.serde",
            "partitioner.ignore.keys",
            "sasl.mechanism",
            "sasl.oauthbearer.token.endpoint.url",
            "delegation.token.expiry.time.ms",
            "message.timestamp.type",
            "",
            ".",
            "listener.name.",
        ] {
            assert!(!is_secret_config_name(name), "{name:?}");
        }
    }
}
