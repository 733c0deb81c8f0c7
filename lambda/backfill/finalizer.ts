export const handler = async (): Promise<void> => {};
