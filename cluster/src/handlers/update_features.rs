//! UpdateFeatures (KIP-584): changes the cluster's finalized feature levels as Kafka 4.4's
//! `FeatureControlManager.updateFeatures` does, every update checked in turn and the first
//! refusal failing the whole request (INVALID_UPDATE_VERSION with Kafka's message): an
//! unknown upgrade type, a negative level, a level the nodes do not support (the release's
//! supported ranges, `release-features.tsv`), a downgrade without a downgrade type or an
//! "upgrade" typed as a downgrade, an unsafe `metadata.version` downgrade, a `kraft.version`
//! downgrade. `ValidateOnly` changes nothing. Level 0 removes a feature. The new levels show
//! in ApiVersions v3+ (and so in the AdminClient's `describeFeatures`). Not modelled: the
//! dependencies between features (`Feature.validateVersion`) and which `metadata.version`
//! downgrades would lose metadata (every safe one is refused as one that might).

use super::Context;
use kafka_codec::messages::update_features_response::UpdatableFeatureResult;
use kafka_codec::messages::{UpdateFeaturesRequest, UpdateFeaturesResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::UpdateFeatures;

/// Kafka's `FeatureUpdate.UpgradeType` codes.
const UPGRADE: i8 = 1;
const SAFE_DOWNGRADE: i8 = 2;
const UNSAFE_DOWNGRADE: i8 = 3;

pub fn handle(context: &Context<'_>, request: &UpdateFeaturesRequest) -> UpdateFeaturesResponse {
    let checked = check(context, request);
    let (code, message) = match &checked {
        Ok(levels) => {
            if !request.validate_only {
                context.shared.feature_updates().set(levels.clone());
            }
            (0, None)
        }
        Err(message) => (
            ErrorCode::INVALID_UPDATE_VERSION.code(),
            Some(message.as_str().into()),
        ),
    };
    // v0-1 list every feature with the outcome when it is a success; a failure is only
    // the top-level error (`UpdateFeaturesResponse.createWithErrors`).
    let results = if checked.is_ok() && context.version <= 1 {
        request
            .feature_updates
            .iter()
            .map(|update| {
                UpdatableFeatureResult::default()
                    .with_feature(update.feature.clone())
                    .with_error_code(0)
                    .with_error_message(None)
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
    let mut levels = Vec::new();
    for update in &request.feature_updates {
        let name = update.feature.as_str();
        let level = update.max_version_level;
        // v0 has only `AllowDowngrade`.
        let upgrade_type = if context.version == 0 {
            if update.allow_downgrade {
                SAFE_DOWNGRADE
            } else {
                UPGRADE
            }
        } else {
            update.upgrade_type
        };
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
            return Err(format!("Invalid metadata.version {level}. {reason}"));
        }
        if name == "kraft.version" && upgrade_type != UPGRADE && level != current {
            return Err(invalid("Can't downgrade the version of this feature."));
        }
        levels.push((name.to_owned(), level));
    }
    Ok(levels)
}
