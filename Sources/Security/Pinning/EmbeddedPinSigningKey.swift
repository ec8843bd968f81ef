/// The pin-update signing key compiled into every Aether build (RSA-4096, public half only).
///
/// Generated once with `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:4096`; the private half is
/// held offline by whoever operates pin updates and is never stored in this repository. Replacing this key
/// is an app release. Its id (SHA-256 of the SPKI DER) is
/// 42e7f8f8ddd1c2a2e98448c0ec8aa1620983f1ac86f40d84f0ef41a9ccc568ab.
public enum EmbeddedPinSigningKey {
    /// The SubjectPublicKeyInfo PEM.
    public static let pem = """
        -----BEGIN PUBLIC KEY-----
        MIICIjANBgkqhkiG9w0BAQEFAAOCAg8AMIICCgKCAgEAs+iyPvDHghFEwY6qkU7R
        uERnYBz4tpVzJIUA+ZIzbw64MTbuAeYA7fQbrPU+ROhMfW6s2fVe3OnJbqlSSWPc
        XUCSIh3tEfIT1BIzdprP1HiLdzzEhElkf43/5exUDL5SXkfBNyu7+P/uOK0u9l2w
        z7RLS23E06D3MiPCFZ7W8ZGuMC6zJW0FgLIPfSquVuYNciGHD3CIPbKm2kDPc+K4
        VJJ/Omvncb8SXdenwouGl12+Ec2jK9gZNVjR4gGiTYFfs5rLCleLIZIjs0/pwNCi
        UyOmyFI6iJRSrwh3AOoz0l/DPkxKXxAuUY2QhvsPkEjaOijNEQ4lb4qUEGZjBpxK
        zz15gGqd2sBhVz2c8z220bj0zqM76SZXEncg4H2ylk4o4dTFy8MiKcteOtQDAW71
        k3Fd09BrpjIbdOOgg75eYqVTDrkyHRfdV+9PKA4Pp3Wxuz4Ru6XVpn/Q2oKRMKhE
        y4Y+2H1xc4DarBxwI7dfLB3SuCm6MqZH73M7DjuYOytNgxRzrHEBJUZqaoTodRZp
        0NXtagO3f7OnRLGerWZizQLj9pX3twFs+9O3slEkhS54WWhTGHe2pofTMJLKLr4l
        vp+faWsj03qW9Bqqd5TZeboCQOupFvuZF12iBuUYbtl1l0LOxL2dlaS2iUoHfJFf
        fNwR1/AAOvCk7MjwE9+BxzsCAwEAAQ==
        -----END PUBLIC KEY-----
        """

    /// The expected id of `pem`, checked when the key is loaded.
    public static let id = "42e7f8f8ddd1c2a2e98448c0ec8aa1620983f1ac86f40d84f0ef41a9ccc568ab"

    /// The embedded key, loaded and checked (RSA, 4096 bits, expected id).
    public static func load() throws(SecurityError) -> PinSigningKey {
        let key = try PinSigningKey(pem: pem)
        guard key.id == id else {
            throw SecurityError(.invalidKey, "the embedded pin signing key does not match its id")
        }
        return key
    }
}
