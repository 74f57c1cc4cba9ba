/// The version `queryfs --version` prints (and the man pages carry): raised
/// with each release, by hand, in this one place.
public enum QueryFSVersion {
    public static let string = "0.9.0"
}
