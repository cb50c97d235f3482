// A real OAuth 2.1 / OpenID Connect authorization server (oidc-provider) for
// the authentication tests: the client-credentials grant, resource
// indicators (RFC 8707) and JWT access tokens signed RS256 by a key made at
// start. Listens on a free loopback port and prints `issuer URL` when ready.
//
// Clients: agent-a (every Jacobian scope, tenant team-agent-a) and agent-b
// (jacobian:read only).
import http from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const SCOPES = 'jacobian:invoke jacobian:workspace jacobian:read';
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signing = { ...privateKey.export({ format: 'jwk' }), kid: 'rs-1', use: 'sig', alg: 'RS256' };
const client = (id, scope) => ({
  client_id: id,
  client_secret: `secret-${id}`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  scope,
});

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [client('agent-a', SCOPES), client('agent-b', 'jacobian:read')],
    jwks: { keys: [signing] },
    scopes: SCOPES.split(' '),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => ({
          scope: SCOPES,
          audience: resourceIndicator,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (_ctx, token) => ({ tenant: `team-${token.clientId}` }),
  });
  server.on('request', provider.callback());
  console.log(`issuer ${issuer}`);
});
