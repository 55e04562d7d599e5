/** Line icons (24×24, stroked), decorative: always hidden from assistive technology. */
const PATHS = {
  overview: 'M3 12l9-8 9 8M5 10v10h5v-6h4v6h5V10',
  apis: 'M8 6L2 12l6 6M16 6l6 6-6 6',
  schemas: 'M4 6h16M4 12h16M4 18h10',
  rulesets: 'M9 11l2 2 4-4M12 3l8 4v5c0 5-3.5 8-8 9-4.5-1-8-4-8-9V7z',
  sites: 'M4 5h16v14H4zM4 9h16M8 5v4',
  sdks: 'M12 3l8 4.5v9L12 21l-8-4.5v-9zM12 12l8-4.5M12 12v9M12 12L4 7.5',
  builds: 'M14.7 6.3a4 4 0 00-5.4 5.4L3 18l3 3 6.3-6.3a4 4 0 005.4-5.4l-2.5 2.5-2.4-.6-.6-2.4z',
  keys: 'M7.5 20a3.5 3.5 0 100-7 3.5 3.5 0 000 7zM10 13.5l10-10M16 7.5l3 3M18.5 5l2 2',
  webhooks: 'M12 14a2 2 0 100-4 2 2 0 000 4zM16.2 7.8a6 6 0 010 8.4M7.8 16.2a6 6 0 010-8.4M19.1 4.9a10 10 0 010 14.2M4.9 19.1a10 10 0 010-14.2',
  mirror: 'M6 3v12M18 9a3 3 0 100-6 3 3 0 000 6zM6 21a3 3 0 100-6 3 3 0 000 6zM18 9c0 6-12 3-12 6',
  search: 'M11 18a7 7 0 100-14 7 7 0 000 14zM21 21l-5-5',
} as const

export type IconName = keyof typeof PATHS

export function Icon(props: { name: IconName }) {
  return (
    <svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">
      <path d={PATHS[props.name]} />
    </svg>
  )
}
