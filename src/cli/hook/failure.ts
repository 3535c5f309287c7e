/** A failure of the hook whose message may be shown to the model: it names no server, path or pin. */
export class HookFailure extends Error {}
