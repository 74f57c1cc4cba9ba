import QueryFSEngine
/// The version `queryfs --version` prints (and the man pages carry): raised
/// with each release, by hand, in this one place.
package enum QueryFSVersion {
    package static let string = "0.9.0"
}
