import { useState } from 'react';

/**
 * Offers browser notifications (an answer ended, an approval waits, while the tab is hidden) until the
 * person has answered the browser's question; nothing shows where notifications are unsupported.
 */
export function NotificationsToggle() {
  const supported = typeof Notification !== 'undefined';
  const [permission, setPermission] = useState(supported ? Notification.permission : 'denied');
  if (!supported || permission !== 'default') return null;
  return (
    <button
      type="button"
      className="link-button notifications-toggle"
      onClick={() => void Notification.requestPermission().then(setPermission)}
    >
      Notify me when an answer ends or an approval waits
    </button>
  );
}
