export function renderReport(_dir: string, _run: { seconds: number }): void {}
