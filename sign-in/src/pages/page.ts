/** What every page gets: `finish` ends the interaction, or turns the page to the second factor it owes. */
export type PageProps = { finish: () => Promise<void> };
