// oidc-provider ships no type declarations; the tests use its documented constructor and callback only.
declare module 'oidc-provider';
