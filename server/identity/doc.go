// Package identity issues and verifies anonymous player identities: a
// random user id and a token that proves the server issued it (HMAC-SHA256
// under a server secret). No account, no password: whoever holds the token
// is that player.
//
// Token format (opaque to clients): "v1." + user id + "." + base64url(MAC),
// where the user id is "u" + 22 base64url characters (128 random bits) and
// the MAC is HMAC-SHA256(secret, "nearzero-user:" + user id), truncated to
// 128 bits.
//
// Invariants: Verify runs in constant time in the MAC comparison; a token
// verifies only under the secret that issued it; the secret is at least
// MinSecret bytes.
package identity
