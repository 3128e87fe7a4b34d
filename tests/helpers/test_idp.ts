/**
 * A test identity provider on loopback: authorization server metadata and a JWKS served by a
 * real `Deno.serve`, and JWTs signed with `jose` by its private key. The JWKS can be made slow
 * (answers after a delay) or down (500), to check that a resource server fails closed in a
 * bounded time. Hostile tokens (another key under the same `kid`, `alg: none`, HS256 keyed with
 * the public key) are made here too, so every test forges them the same way.
 * @module
 */
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT, UnsecuredJWT } from "jose";

/** How the JWKS endpoint answers. */
export type JwksMode = { kind: "up" } | { kind: "slow"; delayMs: number } | { kind: "down" };

/** Claims a test token carries besides the defaults. */
export interface TokenClaims extends JWTPayload {
  /** Space-separated scopes (the `scope` claim). */
  scope?: string;
  /** The display name a principal gets. */
  name?: string;
}

/** Options of {@linkcode TestIdp.sign}. */
export interface SignOptions {
  /** Lifetime in seconds from now (default 300); negative makes an expired token. */
  expiresIn?: number;
  /** `nbf` this many seconds from now. */
  notBeforeIn?: number;
  /** The `kid` header (default the IdP's key id). */
  kid?: string;
}

/** A running test identity provider. */
export interface TestIdp {
  /** Its issuer, `http://127.0.0.1:PORT`. */
  readonly issuer: string;
  /** Where its JWKS is served. */
  readonly jwksUrl: string;
  /** Requests its JWKS endpoint has answered or is answering. */
  readonly jwksRequests: number;
  /** Changes how the JWKS endpoint answers. */
  setJwks(mode: JwksMode): void;
  /** A token signed by the IdP's key: `iss` is the issuer, `sub` "alice" unless `claims` say. */
  sign(claims: TokenClaims, options?: SignOptions): Promise<string>;
  /** A token signed by another key but naming the IdP's `kid`: a forged signature. */
  forge(claims: TokenClaims, options?: SignOptions): Promise<string>;
  /** An unsigned token (`alg: none`). */
  unsigned(claims: TokenClaims): string;
  /** A token signed HS256 with the IdP's public key as the HMAC secret (key confusion). */
  hmacWithPublicKey(claims: TokenClaims): Promise<string>;
  /** Stops serving. */
  close(): Promise<void>;
}

const KID = "test-key-1";

function withDefaults(issuer: string, claims: TokenClaims): TokenClaims {
  return { iss: issuer, sub: "alice", ...claims };
}

/** Starts a test identity provider on 127.0.0.1 (port 0), JWKS up, keys ES256. */
export async function startTestIdp(): Promise<TestIdp> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const other = await generateKeyPair("ES256");
  const publicJwk: JWK = { ...await exportJWK(publicKey), kid: KID, alg: "ES256", use: "sig" };
  let mode: JwksMode = { kind: "up" };
  let jwksRequests = 0;
  const aborts = new AbortController();
  let issuer = "";
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: aborts.signal, onListen: () => {} },
    async (request): Promise<Response> => {
      const path = new URL(request.url).pathname;
      if (path === "/jwks") {
        jwksRequests++;
        if (mode.kind === "down") return new Response("down", { status: 500 });
        if (mode.kind === "slow") {
          const delay = mode.delayMs;
          await new Promise((wake) => setTimeout(wake, delay));
        }
        return Response.json({ keys: [publicJwk] });
      }
      if (
        path === "/.well-known/oauth-authorization-server" ||
        path === "/.well-known/openid-configuration"
      ) {
        return Response.json({
          issuer,
          jwks_uri: `${issuer}/jwks`,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          response_types_supported: ["code"],
        });
      }
      return new Response("not found", { status: 404 });
    },
  );
  issuer = `http://127.0.0.1:${server.addr.port}`;
  const signWith =
    (key: Parameters<SignJWT["sign"]>[0]) => (claims: TokenClaims, options: SignOptions = {}) => {
      const now = Math.floor(Date.now() / 1000);
      const jwt = new SignJWT(withDefaults(issuer, claims))
        .setProtectedHeader({ alg: "ES256", kid: options.kid ?? KID, typ: "at+jwt" })
        .setIssuedAt(now)
        .setExpirationTime(now + (options.expiresIn ?? 300));
      if (options.notBeforeIn !== undefined) jwt.setNotBefore(now + options.notBeforeIn);
      return jwt.sign(key);
    };
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    get jwksRequests() {
      return jwksRequests;
    },
    setJwks(next) {
      mode = next;
    },
    sign: signWith(privateKey),
    forge: signWith(other.privateKey),
    unsigned: (claims) =>
      new UnsecuredJWT(withDefaults(issuer, claims)).setIssuedAt()
        .setExpirationTime("5m").encode(),
    hmacWithPublicKey: (claims) =>
      new SignJWT(withDefaults(issuer, claims))
        .setProtectedHeader({ alg: "HS256", kid: KID })
        .setIssuedAt().setExpirationTime("5m")
        .sign(new TextEncoder().encode(JSON.stringify(publicJwk))),
    async close() {
      aborts.abort();
      await server.finished;
    },
  };
}
