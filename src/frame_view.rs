//! Zero-copy views of whole frames (feature `views`): the entry points to the generated
//! `<Struct>View` types, beside the owned frames of `frame.rs`, taking the same input and the
//! same [`DecodeOptions`].
//!
//! Making a view checks the whole frame once, as the owned decoder would (framing, header,
//! body, limits, what follows the body), and builds nothing. When the check fails, the owned
//! decoder reads the frame to report the failure: a refused frame is rare, and so the error,
//! its kind, offset and field path are exactly the owned decoder's.

#[cfg(any(feature = "client", feature = "broker"))]
use crate::api::ApiKey;
#[cfg(any(feature = "client", feature = "broker"))]
use crate::frame::{check_frame_size, DecodeOptions, Framing, TrailingBytes};
use crate::message::Message;
#[cfg(any(feature = "client", feature = "broker"))]
use crate::messages;
use crate::versions::VersionRange;
use crate::wire::view::{Checked, Lazy, LazyOrigin, StructView, ViewCheck, ViewCursor};
use crate::wire::{DecodeError, DecodeErrorKind, Decoder};
use bytes::Bytes;

/// The owned decoder's error for a frame the view's check refused (`view`): the same frame
/// refused the same way. Should the owned decoder accept it, the view's own error stands.
#[cold]
fn owned_error<T>(owned: Result<T, DecodeError>, view: DecodeError) -> DecodeError {
    owned.err().unwrap_or(view)
}

#[cfg(any(feature = "client", feature = "broker"))]
/// Where the bare frame lies in `input`, as `options.framing` lays it out.
fn frame_range(input: &[u8], options: &DecodeOptions) -> Result<(usize, usize), DecodeError> {
    match options.framing {
        Framing::Bare => Ok((0, input.len())),
        Framing::SizePrefixed => {
            let eof = |needed: usize, remaining: usize, offset: usize| {
                DecodeError::new(DecodeErrorKind::UnexpectedEof { needed, remaining }, offset)
            };
            let Some(prefix) = input.first_chunk::<4>() else {
                return Err(eof(4 - input.len(), input.len(), 0));
            };
            let size = i32::from_be_bytes(*prefix);
            let size = usize::try_from(size)
                .map_err(|_| DecodeError::new(DecodeErrorKind::InvalidFrameSize(size), 0))?;
            check_frame_size(size, &options.limits)?;
            let end = 4 + size;
            if input.len() < end {
                return Err(eof(end - input.len(), input.len() - 4, input.len()));
            }
            if options.trailing_bytes == TrailingBytes::Reject && input.len() > end {
                let kind = DecodeErrorKind::TrailingBytes(input.len() - end);
                return Err(DecodeError::new(kind, end));
            }
            Ok((4, end))
        }
    }
}

/// Checks one struct with `check` at `version` from the decoder's position.
#[inline]
fn check_struct(
    d: &mut Decoder<'_>,
    check: ViewCheck,
    versions: Option<VersionRange>,
    version: i16,
) -> Result<usize, DecodeError> {
    if versions.is_some_and(|valid| !valid.contains(version)) {
        return Err(d.error(DecodeErrorKind::UnsupportedVersion {
            version,
            valid: String::new(),
        }));
    }
    let start = d.position();
    check(d, version)?;
    Ok(start)
}

#[cfg(any(feature = "client", feature = "broker"))]
/// The end of a frame: what may follow the body.
fn check_end(d: &Decoder<'_>, options: &DecodeOptions) -> Result<(), DecodeError> {
    if options.trailing_bytes == TrailingBytes::Reject && d.remaining() != 0 {
        return Err(d.error(DecodeErrorKind::TrailingBytes(d.remaining())));
    }
    Ok(())
}

#[cfg(any(feature = "client", feature = "broker"))]
/// Checks a frame's header (`header`: its check and version) and body (`body`: its check,
/// the versions it has, and the version) in `input[start..end]`, then what follows them;
/// where each begins.
#[inline]
fn check_header_and_body(
    input: &Bytes,
    (start, end): (usize, usize),
    options: &DecodeOptions,
    header: (ViewCheck, i16),
    body: ((ViewCheck, VersionRange), i16),
) -> Result<(usize, usize), DecodeError> {
    let mut d = Decoder::with_limits_in(input, start, end, options.limits);
    let header_at = check_struct(&mut d, header.0, None, header.1)?;
    let ((body_check, versions), version) = body;
    let body_at = check_struct(&mut d, body_check, Some(versions), version)?;
    check_end(&d, options)?;
    Ok((header_at, body_at))
}

/// A request frame read in place: its header and a view of its body, borrowing the input.
///
/// ```
/// use kafka_codec::messages::describe_quorum_request::{self, DescribeQuorumRequestView};
/// use kafka_codec::{DecodeOptions, RequestFrame, RequestFrameView};
///
/// let body = kafka_codec::messages::DescribeQuorumRequest::default().with_topics(vec![
///     describe_quorum_request::TopicData::default().with_topic_name("__cluster_metadata".into()),
/// ]);
/// let bytes = RequestFrame::new(body, 2, 7).encode_to_bytes().unwrap();
///
/// let frame = RequestFrameView::new(&bytes, &DecodeOptions::default()).unwrap();
/// assert_eq!(frame.header().correlation_id(), 7);
/// let body: DescribeQuorumRequestView<'_> = frame.body().unwrap();
/// let names: Vec<&str> = body.topics().map(|topic| topic.topic_name()).collect();
/// assert_eq!(names, ["__cluster_metadata"]);
/// ```
#[cfg(feature = "broker")]
#[derive(Clone, Copy)]
pub struct RequestFrameView<'a> {
    api_key: ApiKey,
    version: i16,
    header: messages::request_header::RequestHeaderView<'a>,
    body: ViewCursor<'a, Checked>,
}

#[cfg(feature = "broker")]
impl<'a> RequestFrameView<'a> {
    /// Views the request frame in `input` (after its size prefix with
    /// [`Framing::SizePrefixed`]), checked once as [`crate::RequestFrame::decode_with`]
    /// checks it; refused with the error that decode gives.
    #[inline]
    pub fn new(input: &'a Bytes, options: &DecodeOptions) -> Result<Self, DecodeError> {
        Self::check(input, options).map_err(|view| {
            owned_error(
                crate::RequestFrame::decode_with(input.clone(), options),
                view,
            )
        })
    }

    #[inline]
    fn check(input: &'a Bytes, options: &DecodeOptions) -> Result<Self, DecodeError> {
        let (start, end) = frame_range(input, options)?;
        check_frame_size(end - start, &options.limits)?;
        let frame = &input[start..end];
        let (api_key, version) = crate::RequestFrame::peek_api(frame)?;
        let body_check = messages::request_view_check(api_key.key())
            .ok_or_else(|| DecodeError::new(DecodeErrorKind::UnknownApiKey(api_key.key()), 0))?;
        let header_version = api_key.request_header_version(version);
        let (header_at, body_at) = check_header_and_body(
            input,
            (start, end),
            options,
            (
                messages::request_header::RequestHeaderView::<Checked>::view_check,
                header_version,
            ),
            (body_check, version),
        )?;
        Ok(RequestFrameView {
            api_key,
            version,
            header: StructView::from_cursor(ViewCursor::new(input, header_at, header_version, ())),
            body: ViewCursor::new(input, body_at, version, ()),
        })
    }

    /// The API the header names.
    pub fn api_key(&self) -> ApiKey {
        self.api_key
    }

    /// The body's version, from the header.
    pub fn api_version(&self) -> i16 {
        self.version
    }

    /// The header.
    pub fn header(&self) -> messages::request_header::RequestHeaderView<'a> {
        self.header
    }

    /// `part`, a string's or bytes' slice this frame's views returned, as a `Bytes` sharing
    /// the frame's buffer (no copy): records to hand on to another task, say. A slice from
    /// elsewhere is copied.
    pub fn share(&self, part: &[u8]) -> Bytes {
        crate::wire::view::share(self.body.buf(), part)
    }

    /// The body as the view `V` (`ProduceRequestView`, ...), or `None` when the frame holds
    /// another API's request.
    pub fn body<V: StructView<'a, Mode = Checked>>(&self) -> Option<V>
    where
        V::Owned: Message,
    {
        let is_body = V::Owned::KIND == crate::MessageKind::Request
            && V::Owned::API_KEY == Some(self.api_key.key());
        is_body.then(|| V::from_cursor(self.body))
    }
}

/// A response frame read in place: its header and a view of its body, borrowing the input.
/// A response does not say its API or version; the caller knows them from the request.
#[cfg(feature = "client")]
#[derive(Clone, Copy)]
pub struct ResponseFrameView<'a> {
    api_key: ApiKey,
    version: i16,
    header: messages::response_header::ResponseHeaderView<'a>,
    body: ViewCursor<'a, Checked>,
}

#[cfg(feature = "client")]
impl<'a> ResponseFrameView<'a> {
    /// Views the response frame of `api_key` at `version` in `input`, checked once as
    /// [`crate::ResponseFrame::decode_with`] checks it; refused with the error that decode
    /// gives.
    #[inline]
    pub fn new(
        input: &'a Bytes,
        api_key: ApiKey,
        version: i16,
        options: &DecodeOptions,
    ) -> Result<Self, DecodeError> {
        Self::check(input, api_key, version, options).map_err(|view| {
            owned_error(
                crate::ResponseFrame::decode_with(input.clone(), api_key, version, options),
                view,
            )
        })
    }

    #[inline]
    fn check(
        input: &'a Bytes,
        api_key: ApiKey,
        version: i16,
        options: &DecodeOptions,
    ) -> Result<Self, DecodeError> {
        let (start, end) = frame_range(input, options)?;
        check_frame_size(end - start, &options.limits)?;
        let body_check = messages::response_view_check(api_key.key())
            .ok_or_else(|| DecodeError::new(DecodeErrorKind::UnknownApiKey(api_key.key()), 0))?;
        let header_version = api_key.response_header_version(version);
        let (header_at, body_at) = check_header_and_body(
            input,
            (start, end),
            options,
            (
                messages::response_header::ResponseHeaderView::<Checked>::view_check,
                header_version,
            ),
            (body_check, version),
        )?;
        Ok(ResponseFrameView {
            api_key,
            version,
            header: StructView::from_cursor(ViewCursor::new(input, header_at, header_version, ())),
            body: ViewCursor::new(input, body_at, version, ()),
        })
    }

    /// The API, as given.
    pub fn api_key(&self) -> ApiKey {
        self.api_key
    }

    /// The body's version, as given.
    pub fn api_version(&self) -> i16 {
        self.version
    }

    /// The header (the correlation id).
    pub fn header(&self) -> messages::response_header::ResponseHeaderView<'a> {
        self.header
    }

    /// `part`, a string's or bytes' slice this frame's views returned, as a `Bytes` sharing
    /// the frame's buffer (no copy): records to hand on to another task, say. A slice from
    /// elsewhere is copied.
    pub fn share(&self, part: &[u8]) -> Bytes {
        crate::wire::view::share(self.body.buf(), part)
    }

    /// The body as the view `V` (`FetchResponseView`, ...), or `None` when `V` is not this
    /// API's response.
    pub fn body<V: StructView<'a, Mode = Checked>>(&self) -> Option<V>
    where
        V::Owned: Message,
    {
        let is_body = V::Owned::KIND == crate::MessageKind::Response
            && V::Owned::API_KEY == Some(self.api_key.key());
        is_body.then(|| V::from_cursor(self.body))
    }
}

/// Views a message body alone (no header) at `version`, from the start of `input`; bytes
/// after it are left, as [`Message::decode`] leaves them. Checked once as `Message::decode`
/// checks it, and refused with the error that decode gives.
///
/// ```
/// use kafka_codec::messages::{metadata_response::MetadataResponseView, MetadataResponse};
/// use kafka_codec::{view_message, Message};
///
/// let bytes = MetadataResponse::default().with_throttle_time_ms(5).encode_to_bytes(12).unwrap();
/// let view: MetadataResponseView<'_> = view_message(&bytes, 12).unwrap();
/// assert_eq!(view.throttle_time_ms(), 5);
/// assert_eq!(view.to_owned(), MetadataResponse::decode(&mut bytes.clone(), 12).unwrap());
/// ```
#[inline]
pub fn view_message<'a, V: StructView<'a, Mode = Checked>>(
    input: &'a Bytes,
    version: i16,
) -> Result<V, DecodeError>
where
    V::Owned: Message + crate::message::DecodeFields,
{
    let mut d = Decoder::new(input);
    match check_struct(&mut d, V::check, Some(V::Owned::VALID_VERSIONS), version) {
        Ok(at) => Ok(V::from_cursor(ViewCursor::new(input, at, version, ()))),
        Err(view) => Err(owned_error(
            V::Owned::decode(&mut input.clone(), version),
            view,
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Lazy views: only the framing and header checked when made

#[cfg(feature = "broker")]
/// The owned decode of a lazy request frame's input, for its error.
// Inline: a function this library called or pointed to from a function that is not inline
// would compile every compiled API's owned decoder here, for every dependent of `views`
// (they are generated in the crate that makes a lazy frame instead, as the codecs are).
#[inline]
fn redo_request(origin: &LazyOrigin<'_>) -> Result<(), DecodeError> {
    crate::RequestFrame::decode_with(origin.input().clone(), origin.options()).map(drop)
}

#[cfg(feature = "client")]
/// The owned decode of a lazy response frame's input, for its error.
// Inline, as `redo_request`.
#[inline]
fn redo_response(origin: &LazyOrigin<'_>) -> Result<(), DecodeError> {
    let (key, version) = origin.api();
    let api = ApiKey::from_key(key)
        .ok_or_else(|| DecodeError::new(DecodeErrorKind::UnknownApiKey(key), 0))?;
    crate::ResponseFrame::decode_with(origin.input().clone(), api, version, origin.options())
        .map(drop)
}

/// A request frame read lazily: making it checks the framing, the header and that the body's
/// API and version are known, not the body. The body's lazy view
/// (`ProduceRequestView<'_, Lazy>`) reads only what its accessors ask for, each returning a
/// `Result` with the owned decoder's error for the frame when what it reads is bad (see
/// [`crate::wire::view::ViewMode`]). The views borrow this value.
///
/// ```
/// use kafka_codec::messages::describe_quorum_request::{self, DescribeQuorumRequestView};
/// use kafka_codec::{DecodeOptions, Lazy, LazyRequestFrame, RequestFrame};
///
/// let body = kafka_codec::messages::DescribeQuorumRequest::default().with_topics(vec![
///     describe_quorum_request::TopicData::default().with_topic_name("__cluster_metadata".into()),
/// ]);
/// let bytes = RequestFrame::new(body, 2, 7).encode_to_bytes().unwrap();
///
/// let frame = LazyRequestFrame::new(&bytes, &DecodeOptions::default()).unwrap();
/// assert_eq!(frame.header().correlation_id(), 7);
/// let body: DescribeQuorumRequestView<'_, Lazy> = frame.body().unwrap();
/// for topic in body.topics().unwrap() {
///     assert_eq!(topic.unwrap().topic_name().unwrap(), "__cluster_metadata");
/// }
/// // Cut short: the accessor that reaches the missing bytes fails as the owned decode does.
/// let cut = bytes.slice(..bytes.len() - 3);
/// let frame = LazyRequestFrame::new(&cut, &DecodeOptions::default()).unwrap();
/// let body: DescribeQuorumRequestView<'_, Lazy> = frame.body().unwrap();
/// let error = body.topics().unwrap().map(|t| t.and_then(|t| t.topic_name())).find_map(Result::err);
/// assert_eq!(error, RequestFrame::decode(cut.clone()).err());
/// ```
#[cfg(feature = "broker")]
pub struct LazyRequestFrame<'a> {
    origin: LazyOrigin<'a>,
    api_key: ApiKey,
    header: messages::request_header::RequestHeaderView<'a>,
    body_at: usize,
}

#[cfg(feature = "broker")]
impl<'a> LazyRequestFrame<'a> {
    /// Reads the request frame in `input` (after its size prefix with
    /// [`Framing::SizePrefixed`]) lazily: its framing and header checked as
    /// [`crate::RequestFrame::decode_with`] checks them, refused with the error that decode
    /// gives.
    #[inline]
    pub fn new(input: &'a Bytes, options: &DecodeOptions) -> Result<Self, DecodeError> {
        Self::check(input, options).map_err(|view| {
            owned_error(
                crate::RequestFrame::decode_with(input.clone(), options),
                view,
            )
        })
    }

    #[inline]
    fn check(input: &'a Bytes, options: &DecodeOptions) -> Result<Self, DecodeError> {
        let (start, end) = frame_range(input, options)?;
        check_frame_size(end - start, &options.limits)?;
        let (api_key, version) = crate::RequestFrame::peek_api(&input[start..end])?;
        let (_, versions) = messages::request_view_check(api_key.key())
            .ok_or_else(|| DecodeError::new(DecodeErrorKind::UnknownApiKey(api_key.key()), 0))?;
        let header_version = api_key.request_header_version(version);
        let mut d = Decoder::with_limits_in(input, start, end, options.limits);
        let header_check = messages::request_header::RequestHeaderView::<Checked>::view_check;
        let header_at = check_struct(&mut d, header_check, None, header_version)?;
        let body_at = check_struct(&mut d, |_, _| Ok(()), Some(versions), version)?;
        let origin = LazyOrigin::new(input, end, *options, (api_key.key(), version), redo_request);
        Ok(LazyRequestFrame {
            origin,
            api_key,
            header: StructView::from_cursor(ViewCursor::new(input, header_at, header_version, ())),
            body_at,
        })
    }

    /// The API the header names.
    pub fn api_key(&self) -> ApiKey {
        self.api_key
    }

    /// The body's version, from the header.
    pub fn api_version(&self) -> i16 {
        self.origin.api().1
    }

    /// The header, checked when the frame was read.
    pub fn header(&self) -> messages::request_header::RequestHeaderView<'a> {
        self.header
    }

    /// `part`, a slice this frame's views returned, as a `Bytes` sharing the frame's buffer
    /// (no copy); a slice from elsewhere is copied.
    pub fn share(&self, part: &[u8]) -> Bytes {
        crate::wire::view::share(self.origin.input(), part)
    }

    /// The body as the lazy view `V` (`ProduceRequestView<'_, Lazy>`, ...), or `None` when
    /// the frame holds another API's request.
    pub fn body<'s, V: StructView<'s, Mode = Lazy>>(&'s self) -> Option<V>
    where
        V::Owned: Message,
    {
        lazy_body(
            &self.origin,
            crate::MessageKind::Request,
            self.api_key,
            self.body_at,
        )
    }
}

/// A response frame read lazily (see [`LazyRequestFrame`]): making it checks the framing and
/// the header; the API and version are the caller's, as for [`ResponseFrameView`].
#[cfg(feature = "client")]
pub struct LazyResponseFrame<'a> {
    origin: LazyOrigin<'a>,
    api_key: ApiKey,
    header: messages::response_header::ResponseHeaderView<'a>,
    body_at: usize,
}

#[cfg(feature = "client")]
impl<'a> LazyResponseFrame<'a> {
    /// Reads the response frame of `api_key` at `version` in `input` lazily: its framing and
    /// header checked as [`crate::ResponseFrame::decode_with`] checks them, refused with the
    /// error that decode gives.
    #[inline]
    pub fn new(
        input: &'a Bytes,
        api_key: ApiKey,
        version: i16,
        options: &DecodeOptions,
    ) -> Result<Self, DecodeError> {
        Self::check(input, api_key, version, options).map_err(|view| {
            owned_error(
                crate::ResponseFrame::decode_with(input.clone(), api_key, version, options),
                view,
            )
        })
    }

    #[inline]
    fn check(
        input: &'a Bytes,
        api_key: ApiKey,
        version: i16,
        options: &DecodeOptions,
    ) -> Result<Self, DecodeError> {
        let (start, end) = frame_range(input, options)?;
        check_frame_size(end - start, &options.limits)?;
        let (_, versions) = messages::response_view_check(api_key.key())
            .ok_or_else(|| DecodeError::new(DecodeErrorKind::UnknownApiKey(api_key.key()), 0))?;
        let header_version = api_key.response_header_version(version);
        let mut d = Decoder::with_limits_in(input, start, end, options.limits);
        let header_check = messages::response_header::ResponseHeaderView::<Checked>::view_check;
        let header_at = check_struct(&mut d, header_check, None, header_version)?;
        let body_at = check_struct(&mut d, |_, _| Ok(()), Some(versions), version)?;
        let origin = LazyOrigin::new(
            input,
            end,
            *options,
            (api_key.key(), version),
            redo_response,
        );
        Ok(LazyResponseFrame {
            origin,
            api_key,
            header: StructView::from_cursor(ViewCursor::new(input, header_at, header_version, ())),
            body_at,
        })
    }

    /// The API, as given.
    pub fn api_key(&self) -> ApiKey {
        self.api_key
    }

    /// The body's version, as given.
    pub fn api_version(&self) -> i16 {
        self.origin.api().1
    }

    /// The header (the correlation id), checked when the frame was read.
    pub fn header(&self) -> messages::response_header::ResponseHeaderView<'a> {
        self.header
    }

    /// `part`, a slice this frame's views returned, as a `Bytes` sharing the frame's buffer
    /// (no copy); a slice from elsewhere is copied.
    pub fn share(&self, part: &[u8]) -> Bytes {
        crate::wire::view::share(self.origin.input(), part)
    }

    /// The body as the lazy view `V` (`FetchResponseView<'_, Lazy>`, ...), or `None` when `V`
    /// is not this API's response.
    pub fn body<'s, V: StructView<'s, Mode = Lazy>>(&'s self) -> Option<V>
    where
        V::Owned: Message,
    {
        lazy_body(
            &self.origin,
            crate::MessageKind::Response,
            self.api_key,
            self.body_at,
        )
    }
}

/// The body of a lazy frame as the lazy view `V`, if `V` is the `kind` of `api_key`.
#[cfg(any(feature = "client", feature = "broker"))]
fn lazy_body<'s, V: StructView<'s, Mode = Lazy>>(
    origin: &'s LazyOrigin<'_>,
    kind: crate::MessageKind,
    api_key: ApiKey,
    body_at: usize,
) -> Option<V>
where
    V::Owned: Message,
{
    let is_body = V::Owned::KIND == kind && V::Owned::API_KEY == Some(api_key.key());
    is_body.then(|| {
        V::from_cursor(ViewCursor::new(
            origin.input(),
            body_at,
            origin.api().1,
            origin,
        ))
    })
}

/// The owned decode of a lazy message's input, for its error.
fn redo_message<M: Message + crate::message::DecodeFields>(
    origin: &LazyOrigin<'_>,
) -> Result<(), DecodeError> {
    M::decode(&mut origin.input().clone(), origin.api().1).map(drop)
}

/// A message body alone (no header) read lazily at a version, as [`view_message`] reads it
/// but checking only that the version is the message's: its lazy view reads the rest on
/// demand (see [`LazyRequestFrame`]).
///
/// ```
/// use kafka_codec::messages::{metadata_response::MetadataResponseView, MetadataResponse};
/// use kafka_codec::{Lazy, LazyMessage, Message};
///
/// let bytes = MetadataResponse::default().with_throttle_time_ms(5).encode_to_bytes(12).unwrap();
/// let message = LazyMessage::new::<MetadataResponse>(&bytes, 12).unwrap();
/// let view: MetadataResponseView<'_, Lazy> = message.view().unwrap();
/// assert_eq!(view.throttle_time_ms(), Ok(5));
/// ```
pub struct LazyMessage<'a> {
    origin: LazyOrigin<'a>,
    message: std::any::TypeId,
}

impl<'a> LazyMessage<'a> {
    /// Reads a `M` at `version` from the start of `input` lazily; refused, with the error
    /// `Message::decode` gives, only when `M` has no such version.
    pub fn new<M: Message + crate::message::DecodeFields + 'static>(
        input: &'a Bytes,
        version: i16,
    ) -> Result<Self, DecodeError> {
        let mut d = Decoder::new(input);
        if let Err(view) = check_struct(&mut d, |_, _| Ok(()), Some(M::VALID_VERSIONS), version) {
            return Err(owned_error(M::decode(&mut input.clone(), version), view));
        }
        let origin = LazyOrigin::new(
            input,
            input.len(),
            crate::frame::DecodeOptions::default(),
            (M::API_KEY.unwrap_or(-1), version),
            redo_message::<M>,
        );
        Ok(LazyMessage {
            origin,
            message: std::any::TypeId::of::<M>(),
        })
    }

    /// The message as its lazy view `V`, or `None` when `V` is another message's view.
    pub fn view<'s, V: StructView<'s, Mode = Lazy>>(&'s self) -> Option<V>
    where
        V::Owned: 'static,
    {
        (std::any::TypeId::of::<V::Owned>() == self.message).then(|| {
            let version = self.origin.api().1;
            V::from_cursor(ViewCursor::new(
                self.origin.input(),
                0,
                version,
                &self.origin,
            ))
        })
    }
}
