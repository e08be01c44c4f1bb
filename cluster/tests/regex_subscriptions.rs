//! KIP-848 regex subscriptions (SubscribedTopicRegex): every pattern of
//! `tests/data/re2j.tsv` (what Kafka 4.4's own check and RE2J make of it, written by
//! `tools/regex-reference/run.sh`) is refused with Kafka's message or matches the same topic
//! names here.

use kafka_codec_cluster::consumer_groups::topic_regex;

#[test]
fn every_pattern_is_read_as_kafka_s_re2j_reads_it() {
    let table = include_str!("data/re2j.tsv");
    let mut lines = table.lines().filter(|line| !line.starts_with('#'));
    let topics: Vec<&str> = lines.next().expect("the topics line").split(' ').collect();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for line in lines {
        let mut fields = line.splitn(3, '\t');
        let (pattern, outcome, detail) = (
            fields.next().expect("a pattern"),
            fields.next().expect("an outcome"),
            fields.next().unwrap_or_default(),
        );
        let got = match topic_regex::compile(pattern) {
            Ok(regex) => {
                let matched: Vec<&str> = topics
                    .iter()
                    .copied()
                    .filter(|t| regex.is_match(t))
                    .collect();
                format!("ok\t{}", matched.join(" "))
            }
            Err(message) => format!("invalid\t{message}"),
        };
        if got != format!("{outcome}\t{detail}") {
            wrong.push(format!(
                "{pattern}\n  kafka: {outcome}\t{detail}\n  here:  {got}"
            ));
        }
        checked += 1;
    }
    assert!(checked > 70, "{checked} patterns");
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
