//! Scraping a server command's `--metrics-listen` endpoint with a real HTTP client (`ureq`)
//! and reading the Prometheus text format it answers.

use std::collections::HashMap;
use std::time::Duration;

/// A scrape's answer.
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// `METHOD http://ADDRESS PATH`.
pub fn request(method: &str, address: &str, path: &str) -> Answer {
    let url = format!("http://{address}{path}");
    let agent = agent();
    let mut response = match method {
        "GET" => agent.get(&url).call(),
        "HEAD" => agent.head(&url).call(),
        "POST" => agent.post(&url).send(&b""[..]),
        other => panic!("no {other} here"),
    }
    .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response.body_mut().read_to_string().unwrap();
    Answer {
        status: response.status().as_u16(),
        content_type,
        body,
    }
}

/// GET /metrics, which must answer 200 with the text format; its samples.
pub fn scrape(address: &str) -> Samples {
    let answer = request("GET", address, "/metrics");
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.content_type, "text/plain; version=0.0.4; charset=utf-8",
        "the Prometheus text format"
    );
    Samples::parse(&answer.body)
}

/// The samples of a text-format exposition, by series (`name{label="value",...}` as
/// written), checked against the format as they are read: every sample belongs to a family
/// declared by `# TYPE` before it, values are numbers, and a histogram's buckets are
/// cumulative and end with `+Inf` equal to its `_count`.
pub struct Samples {
    pub values: HashMap<String, f64>,
    pub text: String,
}

impl Samples {
    pub fn parse(text: &str) -> Samples {
        let mut types: HashMap<String, String> = HashMap::new();
        let mut values = HashMap::new();
        for line in text.lines() {
            if let Some(declared) = line.strip_prefix("# TYPE ") {
                let (name, kind) = declared.split_once(' ').expect("# TYPE name kind");
                types.insert(name.to_owned(), kind.to_owned());
                continue;
            }
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let (series, value) = line.rsplit_once(' ').expect("series value");
            let value: f64 = match value {
                "+Inf" => f64::INFINITY,
                value => value
                    .parse()
                    .unwrap_or_else(|_| panic!("not a number: {line}")),
            };
            let name = series.split('{').next().unwrap();
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| {
                    name.strip_suffix(suffix)
                        .filter(|base| types.get(*base).is_some_and(|t| t == "histogram"))
                })
                .unwrap_or(name);
            assert!(
                types.contains_key(family),
                "a sample of no declared family: {line}"
            );
            assert!(
                values.insert(series.to_owned(), value).is_none(),
                "a series twice: {line}"
            );
        }
        let samples = Samples {
            values,
            text: text.to_owned(),
        };
        samples.check_histograms();
        samples
    }

    fn check_histograms(&self) {
        let mut buckets: HashMap<String, Vec<(f64, f64)>> = HashMap::new();
        for (series, value) in &self.values {
            let Some((name, labels)) = series.split_once("_bucket{") else {
                continue;
            };
            let (others, le) = labels
                .trim_end_matches('}')
                .rsplit_once("le=\"")
                .expect("a bucket has le");
            let le: f64 = match le.trim_end_matches('"') {
                "+Inf" => f64::INFINITY,
                le => le.parse().unwrap(),
            };
            let key = format!("{name}{{{}}}", others.trim_end_matches(','));
            buckets.entry(key).or_default().push((le, *value));
        }
        for (key, mut bounds) in buckets {
            bounds.sort_by(|a, b| a.0.total_cmp(&b.0));
            assert!(
                bounds.windows(2).all(|w| w[0].1 <= w[1].1),
                "{key}: buckets not cumulative"
            );
            let (last, total) = *bounds.last().unwrap();
            assert_eq!(last, f64::INFINITY, "{key}: no +Inf bucket");
            let count = key.replacen('{', "_count{", 1).replace("{}", "");
            assert_eq!(
                self.values.get(&count),
                Some(&total),
                "{key}: +Inf != {count}"
            );
        }
    }

    /// The value of `series`, 0 when absent (a series appears once it is not zero).
    pub fn get(&self, series: &str) -> f64 {
        self.values.get(series).copied().unwrap_or(0.0)
    }

    /// The value of `series`, which must be present.
    pub fn must(&self, series: &str) -> f64 {
        *self
            .values
            .get(series)
            .unwrap_or_else(|| panic!("no {series} in\n{}", self.text))
    }
}

/// The metrics address a server command names on stderr
/// (`... metrics on http://ADDRESS/metrics`).
pub fn address_in(stderr: &str) -> Option<String> {
    stderr.lines().find_map(|line| {
        let (_, rest) = line.split_once("metrics on http://")?;
        Some(rest.strip_suffix("/metrics")?.to_owned())
    })
}
