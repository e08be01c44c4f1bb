//! Naming an API and version on the command line (`--api-key DescribeQuorum --api-version 2`).

use super::failure::Failure;
use kafka_codec::ApiKey;

/// `--api-key` and `--api-version`, for frames that do not name their own API.
#[derive(Debug, clap::Args)]
pub struct ApiVersionArgs {
    /// The API, by key number or by name in any case (`55`, `DescribeQuorum`); `kafka-codec
    /// apis` lists them.
    #[arg(long, value_name = "KEY", value_parser = parse_api_key)]
    pub api_key: ApiKey,
    /// The API version: for a response, the version of the request it answers.
    #[arg(long, value_name = "VERSION")]
    pub api_version: i16,
}

impl ApiVersionArgs {
    /// The API and a version it has.
    pub fn resolve(&self) -> Result<(ApiKey, i16), Failure> {
        let (api, version) = (self.api_key, self.api_version);
        if !api.valid_versions().contains(version) {
            return Err(Failure::Usage(format!(
                "{} (key {}) has no version {version} (valid: {})",
                api.name(),
                api.key(),
                api.valid_versions()
            )));
        }
        Ok((api, version))
    }
}

/// An API by number or (case-insensitive) name.
pub fn parse_api_key(text: &str) -> Result<ApiKey, String> {
    match text.parse::<i16>() {
        Ok(number) => ApiKey::from_key(number),
        Err(_) => ApiKey::ALL
            .iter()
            .copied()
            .find(|api| api.name().eq_ignore_ascii_case(text)),
    }
    .ok_or_else(|| format!("unknown API key '{text}' ('kafka-codec apis' lists them)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apis_by_number_or_name() {
        assert_eq!(parse_api_key("55"), Ok(ApiKey::DescribeQuorum));
        assert_eq!(parse_api_key("describequorum"), Ok(ApiKey::DescribeQuorum));
        assert!(parse_api_key("999").is_err());
        assert!(parse_api_key("Nope").is_err());
        let args = |version| ApiVersionArgs {
            api_key: ApiKey::DescribeQuorum,
            api_version: version,
        };
        assert_eq!(args(2).resolve().unwrap(), (ApiKey::DescribeQuorum, 2));
        assert!(matches!(args(99).resolve(), Err(Failure::Usage(_))));
    }
}
