//! UpdateFeatures (KIP-584): changes the cluster's finalized feature levels as Kafka 4.4's
//! `FeatureControlManager.updateFeatures` does, the updates checked in the order of Kafka's
//! `HashMap` of them (a feature named twice counts once, with its last level and type) and
//! the first refusal failing the whole request (INVALID_UPDATE_VERSION with Kafka's message):
//! an unknown upgrade type, a negative level, a level the nodes do not support (the release's
//! supported ranges, `release-features.tsv`), a downgrade without a downgrade type or an
//! "upgrade" typed as one, any `metadata.version` downgrade, a `kraft.version` downgrade, an
//! unknown feature at level 0. v0's `AllowDowngrade` is ignored, as Kafka's controller
//! ignores it (it reads the v1+ `UpgradeType`, whose default is an upgrade). `ValidateOnly`
//! changes nothing; every other accepted request moves the finalized epoch on. Level 0
//! removes a feature. The new levels show in ApiVersions v3+ (and so in
//! the AdminClient's `describeFeatures`). All of it compared with a live 4.4 broker by
//! `tests/update_features.rs`. The only dependency between 4.4's features
//! (`eligible.leader.replicas.version` 1 needs `metadata.version` 23) cannot fail here: every
//! release with the feature finalizes `metadata.version` above 23, and no `metadata.version`
//! downgrade is accepted.

use super::Context;
use crate::consumer_groups::java_order::JavaHashMap;
use kafka_codec::messages::update_features_response::UpdatableFeatureResult;
use kafka_codec::messages::{UpdateFeaturesRequest, UpdateFeaturesResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::UpdateFeatures;

/// Kafka's `FeatureUpdate.UpgradeType` codes (2 is SAFE_DOWNGRADE).
const UPGRADE: i8 = 1;
const UNSAFE_DOWNGRADE: i8 = 3;

pub fn handle(context: &Context<'_>, request: &UpdateFeaturesRequest) -> UpdateFeaturesResponse {
    let checked = check(context, request);
    let (code, message) = match &checked {
        Ok(levels) => {
            if !request.validate_only {
                context.shared.feature_updates().set(levels.clone());
                // The controller writes the new levels to the metadata log.
                context.shared.append_metadata_record();
            }
            (0, None)
        }
        Err(message) => (
            ErrorCode::INVALID_UPDATE_VERSION.code(),
            Some(
                format!(
                    "The update failed for all features since the following feature had an \
                     error: {message}"
                )
                .into(),
            ),
        ),
    };
    // v0-1 list every feature named (twice if named twice) when it is a success; a failure is only
    // the top-level error (`UpdateFeaturesResponse.createWithErrors`).
    let results = if checked.is_ok() && context.version <= 1 {
        request
            .feature_updates
            .iter()
            .map(|update| {
                UpdatableFeatureResult::default()
                    .with_feature(update.feature.clone())
                    .with_error_code(0)
                    // Kafka writes the message of NONE, not null.
                    .with_error_message(Some("NONE".into()))
            })
            .collect()
    } else {
        Vec::new()
    };
    UpdateFeaturesResponse::default()
        .with_error_code(code)
        .with_error_message(message)
        .with_results(results.into_iter().collect())
}

/// The new levels, or Kafka's message for the first update refused.
fn check(
    context: &Context<'_>,
    request: &UpdateFeaturesRequest,
) -> Result<Vec<(String, i16)>, String> {
    let features = context.shared.finalized_features();
    // The node Kafka names: the active controller.
    let controller = context
        .shared
        .controllers
        .first()
        .map_or_else(|| context.shared.controller_for_clients(), |c| c.node_id);
    // Kafka's controller keeps the updates in a `HashMap` by name (the last of a name wins)
    // and checks them in its order; at v0 the `UpgradeType` it reads is the default.
    let mut updates = JavaHashMap::new();
    for update in &request.feature_updates {
        updates.insert(
            update.feature.to_string(),
            (update.max_version_level, update.upgrade_type),
        );
    }
    let mut levels = Vec::new();
    for (name, &(level, upgrade_type)) in updates.iter() {
        let name = name.as_str();
        let invalid =
            |reason: &str| format!("Invalid update version {level} for feature {name}. {reason}");
        if !(UPGRADE..=UNSAFE_DOWNGRADE).contains(&upgrade_type) {
            return Err(invalid(
                "The controller does not support the given upgrade type.",
            ));
        }
        let current = features
            .finalized_levels()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, level)| level);
        if level < 0 {
            return Err(invalid("A feature version cannot be less than 0."));
        }
        // `QuorumFeatures.reasonNotSupported`, for the local controller first.
        let (min, max) = features.supported(name).unwrap_or((0, 0));
        if !(min..=max).contains(&level) {
            let what = format!("Local controller {controller}");
            return Err(invalid(&if max == 0 {
                format!("{what} does not support this feature.")
            } else {
                format!("{what} only supports versions {min}-{max}")
            }));
        }
        if level < current && upgrade_type == UPGRADE {
            return Err(invalid(
                "Can't downgrade the version of this feature without setting the upgrade type \
                 to either safe or unsafe downgrade.",
            ));
        }
        if level > current && upgrade_type != UPGRADE {
            return Err(invalid("Can't downgrade to a newer version."));
        }
        if name == "metadata.version" && level < current {
            let reason = if upgrade_type == UNSAFE_DOWNGRADE {
                "Unsafe metadata downgrade is not supported in this version."
            } else {
                "Refusing to perform the requested downgrade because it might delete metadata \
                 information."
            };
            return Err(format!(
                "Unsupported metadata.version downgrade from {current} to {level}. {reason}"
            ));
        }
        if name == "kraft.version" && upgrade_type != UPGRADE && level != current {
            return Err(invalid("Can't downgrade the version of this feature."));
        }
        // Level 0 passes the range check above even for a feature no node knows.
        if features.supported(name).is_none() {
            return Err(invalid(&format!("Feature {name} not found.")));
        }
        levels.push((name.to_owned(), level));
    }
    Ok(levels)
}
